/**
 * Markdown for agent messages, rendered from `marked`'s tokens straight to elements: no
 * HTML string is ever parsed, so nothing an agent writes can run in the page. Raw HTML is
 * shown as text, links open in a new tab only for http(s) and mailto, and images are shown
 * as links (the page's CSP loads no remote image anyway).
 */

import { Lexer, type Token, type Tokens } from 'marked';
import type { ComponentChildren } from 'preact';

const SAFE_LINK = /^(https?:|mailto:)/i;

function link(href: string, children: ComponentChildren, key: number) {
  if (!SAFE_LINK.test(href)) return <span key={key}>{children}</span>;
  return (
    <a key={key} href={href} target="_blank" rel="noopener noreferrer">
      {children}
    </a>
  );
}

function inline(tokens: Token[] | undefined): ComponentChildren[] {
  return (tokens ?? []).map((token, key) => {
    switch (token.type) {
      case 'text': {
        const text = token as Tokens.Text;
        return text.tokens ? <span key={key}>{inline(text.tokens)}</span> : text.text;
      }
      case 'escape':
        return (token as Tokens.Escape).text;
      case 'strong':
        return <strong key={key}>{inline((token as Tokens.Strong).tokens)}</strong>;
      case 'em':
        return <em key={key}>{inline((token as Tokens.Em).tokens)}</em>;
      case 'del':
        return <del key={key}>{inline((token as Tokens.Del).tokens)}</del>;
      case 'codespan':
        return <code key={key}>{(token as Tokens.Codespan).text}</code>;
      case 'br':
        return <br key={key} />;
      case 'link': {
        const l = token as Tokens.Link;
        return link(l.href, inline(l.tokens), key);
      }
      case 'image': {
        const image = token as Tokens.Image;
        return link(image.href, `[image: ${image.text || image.href}]`, key);
      }
      case 'checkbox':
        return <input key={key} type="checkbox" checked={(token as Tokens.Checkbox).checked} disabled aria-label="task" />;
      default:
        return 'raw' in token ? String(token.raw) : '';
    }
  });
}

function block(token: Token, key: number): ComponentChildren {
  switch (token.type) {
    case 'space':
    case 'def':
      return null;
    case 'paragraph':
      return <p key={key}>{inline((token as Tokens.Paragraph).tokens)}</p>;
    case 'heading': {
      const heading = token as Tokens.Heading;
      // Headings inside a message stay below the page's own (h1, h2).
      const Tag = `h${Math.min(6, heading.depth + 2)}` as 'h3';
      return <Tag key={key}>{inline(heading.tokens)}</Tag>;
    }
    case 'code': {
      const code = token as Tokens.Code;
      return (
        <pre key={key} class="code" data-lang={code.lang || undefined}>
          <code>{code.text}</code>
        </pre>
      );
    }
    case 'blockquote':
      return <blockquote key={key}>{blocks((token as Tokens.Blockquote).tokens)}</blockquote>;
    case 'hr':
      return <hr key={key} />;
    case 'list': {
      const list = token as Tokens.List;
      const items = list.items.map((item, i) => (
        <li key={i}>{item.loose ? blocks(item.tokens) : inlineOrBlocks(item.tokens)}</li>
      ));
      return list.ordered ? (
        <ol key={key} start={typeof list.start === 'number' ? list.start : undefined}>
          {items}
        </ol>
      ) : (
        <ul key={key}>{items}</ul>
      );
    }
    case 'table': {
      const table = token as Tokens.Table;
      const align = (i: number) => table.align[i] ?? undefined;
      return (
        <div key={key} class="table-scroll">
          <table>
            <thead>
              <tr>
                {table.header.map((cell, i) => (
                  <th key={i} style={align(i) ? { textAlign: align(i) } : undefined}>
                    {inline(cell.tokens)}
                  </th>
                ))}
              </tr>
            </thead>
            <tbody>
              {table.rows.map((row, r) => (
                <tr key={r}>
                  {row.map((cell, i) => (
                    <td key={i} style={align(i) ? { textAlign: align(i) } : undefined}>
                      {inline(cell.tokens)}
                    </td>
                  ))}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      );
    }
    case 'html':
      return <p key={key}>{(token as Tokens.HTML).text}</p>;
    case 'text': {
      const text = token as Tokens.Text;
      return <p key={key}>{text.tokens ? inline(text.tokens) : text.text}</p>;
    }
    default:
      return 'raw' in token ? <p key={key}>{String(token.raw)}</p> : null;
  }
}

/** A tight list item's tokens: inline text and checkboxes inline, nested lists as blocks. */
function inlineOrBlocks(tokens: Token[]): ComponentChildren[] {
  return tokens.map((token, key) =>
    token.type === 'text' || token.type === 'checkbox' ? <span key={key}>{inline([token])}</span> : block(token, key),
  );
}

function blocks(tokens: Token[]): ComponentChildren[] {
  return tokens.map((token, key) => block(token, key));
}

/** Renders markdown text as elements (never as HTML). */
export function Markdown({ text }: { text: string }) {
  let tokens: Token[];
  try {
    tokens = Lexer.lex(text, { gfm: true });
  } catch {
    return <p class="plain">{text}</p>;
  }
  return <div class="markdown">{blocks(tokens)}</div>;
}
