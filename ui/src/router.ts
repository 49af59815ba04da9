/**
 * The inspector's screens and their URLs under the mount point (`/ui`): `/ui/` (sessions),
 * `/ui/sessions/{id}`, `/ui/new`, `/ui/agents`. Navigation uses the History API, so every
 * screen has its own URL to link, bookmark and reload.
 */

import { useEffect, useState } from 'preact/hooks';
import { mount } from './api.js';

/** A screen. */
export type Route =
  | { name: 'sessions' }
  | { name: 'session'; id: string }
  | { name: 'new' }
  | { name: 'agents' }
  | { name: 'notFound'; path: string };

/** The screen a path shows. */
export function parse(pathname: string, base: string = mount(pathname).base): Route {
  const rest = pathname.startsWith(base) ? pathname.slice(base.length) : pathname;
  const parts = rest.split('/').filter((p) => p.length > 0);
  if (parts.length === 0) return { name: 'sessions' };
  if (parts[0] === 'sessions' && parts.length === 1) return { name: 'sessions' };
  if (parts[0] === 'sessions' && parts.length === 2) {
    try {
      return { name: 'session', id: decodeURIComponent(parts[1]!) };
    } catch {
      return { name: 'notFound', path: pathname };
    }
  }
  if (parts[0] === 'new' && parts.length === 1) return { name: 'new' };
  if (parts[0] === 'agents' && parts.length === 1) return { name: 'agents' };
  return { name: 'notFound', path: pathname };
}

/** The URL of a screen. */
export function href(route: Route): string {
  const base = mount().base;
  switch (route.name) {
    case 'sessions':
      return `${base}/`;
    case 'session':
      return `${base}/sessions/${encodeURIComponent(route.id)}`;
    case 'new':
      return `${base}/new`;
    case 'agents':
      return `${base}/agents`;
    case 'notFound':
      return route.path;
  }
}

const listeners = new Set<() => void>();

/** Shows another screen (a new history entry). */
export function navigate(url: string): void {
  history.pushState(null, '', url);
  for (const listener of listeners) listener();
}

/** The screen of the current URL, following navigation and the back button. */
export function useRoute(): Route {
  const [route, setRoute] = useState(() => parse(location.pathname));
  useEffect(() => {
    const update = () => setRoute(parse(location.pathname));
    listeners.add(update);
    addEventListener('popstate', update);
    return () => {
      listeners.delete(update);
      removeEventListener('popstate', update);
    };
  }, []);
  return route;
}

/** A click handler for in-app links: navigates without reloading (plain clicks only). */
export function follow(event: MouseEvent): void {
  const anchor = (event.currentTarget as HTMLAnchorElement | null) ?? undefined;
  if (!anchor || event.defaultPrevented || event.button !== 0) return;
  if (event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
  event.preventDefault();
  navigate(anchor.getAttribute('href') ?? '/');
}
