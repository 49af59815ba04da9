// Webhooks: the signature check on its own (good, tampered, wrong secret, stale, malformed),
// then real deliveries of a real daemon to a loopback receiver started here, checked with
// the SDK's own helper, and seen `delivered` in the daemon's list.

import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { once } from 'node:events';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import type { EventType, WebhookDelivery, WebhookPayload } from 'sandbox-daemon';
import type { LocalSandboxDaemon } from 'sandbox-daemon/local';
import {
  DEFAULT_WEBHOOK_TOLERANCE_SECONDS,
  WEBHOOK_ID_HEADER,
  WEBHOOK_SIGNATURE_HEADER,
  WebhookSignatureError,
  verifyWebhookSignature,
} from 'sandbox-daemon/webhooks';
import { collect, isProblem, startDaemon, uniqueId } from './helpers.js';

/** The daemon's signature (`crates/daemon/src/signing.rs`), computed independently. */
function sign(secret: string, t: number, body: string | Buffer): string {
  const mac = createHmac('sha256', secret).update(`${t}.`).update(body).digest('hex');
  return `t=${t},v1=${mac}`;
}

/** Asserts a `WebhookSignatureError` of `reason`. */
function refused(reason: WebhookSignatureError['reason']): (error: unknown) => boolean {
  return (error: unknown) => {
    assert.ok(error instanceof WebhookSignatureError, `a WebhookSignatureError, not ${String(error)}`);
    assert.equal(error.reason, reason, error.message);
    return true;
  };
}

describe('verifyWebhookSignature', () => {
  const secret = 'whsec_0123456789abcdef';
  const body = '{"deliveryId":"s:5","webhookId":"wh_1","type":"turnEnded","event":{}}';
  const t = 1_800_000_000;
  const now = t + 10;

  it('accepts a good signature, of text or bytes, and answers its time', () => {
    assert.equal(verifyWebhookSignature(secret, sign(secret, t, body), body, { now }), t);
    assert.equal(verifyWebhookSignature(secret, sign(secret, t, body), Buffer.from(body), { now }), t);
    assert.equal(verifyWebhookSignature(Buffer.from(secret), sign(secret, t, body), new TextEncoder().encode(body), { now }), t);
    assert.equal(verifyWebhookSignature(secret, sign(secret, t, body), body, { now: new Date(now * 1000) }), t);
    // Spaces around the parts, uppercase hex, a scheme it does not know: all fine.
    const spaced = sign(secret, t, body).replace(',', ' , ').replace(/v1=([0-9a-f]+)/, (_, hex: string) => `v1=${hex.toUpperCase()}`);
    assert.equal(verifyWebhookSignature(secret, `${spaced},v0=abc`, body, { now }), t);
    // A header given as several values (as Node gives a repeated header).
    const [time, v1] = sign(secret, t, body).split(',') as [string, string];
    assert.equal(verifyWebhookSignature(secret, [time, v1], body, { now }), t);
  });

  it('accepts any v1= of several, in any place', () => {
    const good = sign(secret, t, body).split(',')[1];
    const wrong = sign('another-secret-0123', t, body).split(',')[1];
    assert.equal(verifyWebhookSignature(secret, `t=${t},${wrong},${good}`, body, { now }), t);
    assert.equal(verifyWebhookSignature(secret, `${good},t=${t},${wrong},v1=`, body, { now }), t);
    assert.throws(() => verifyWebhookSignature(secret, `t=${t},${wrong},${wrong}`, body, { now }), refused('mismatch'));
  });

  it('refuses a tampered body, a re-serialised body, and a moved time', () => {
    const header = sign(secret, t, body);
    assert.throws(() => verifyWebhookSignature(secret, header, body.replace('turnEnded', 'turnStarted'), { now }), refused('mismatch'));
    assert.throws(() => verifyWebhookSignature(secret, header, `${body} `, { now }), refused('mismatch'));
    assert.throws(() => verifyWebhookSignature(secret, header, JSON.stringify(JSON.parse(body), null, 1), { now }), refused('mismatch'));
    // The time is signed: the same v1 with another t does not hold.
    assert.throws(() => verifyWebhookSignature(secret, header.replace(`t=${t}`, `t=${t + 1}`), body, { now }), refused('mismatch'));
  });

  it('refuses a wrong secret', () => {
    assert.throws(() => verifyWebhookSignature('whsec_another-one-9876', sign(secret, t, body), body, { now }), refused('mismatch'));
    assert.throws(() => verifyWebhookSignature(secret.toUpperCase(), sign(secret, t, body), body, { now }), refused('mismatch'));
    assert.throws(() => verifyWebhookSignature('', sign(secret, t, body), body, { now }), TypeError);
  });

  it('refuses a stale (or future) time beyond the tolerance, which can be set', () => {
    const header = sign(secret, t, body);
    assert.equal(DEFAULT_WEBHOOK_TOLERANCE_SECONDS, 300);
    assert.equal(verifyWebhookSignature(secret, header, body, { now: t + 300 }), t);
    assert.throws(() => verifyWebhookSignature(secret, header, body, { now: t + 301 }), (error: unknown) => {
      assert.ok(refused('stale')(error) && error instanceof WebhookSignatureError);
      assert.equal(error.timestamp, t);
      return true;
    });
    assert.throws(() => verifyWebhookSignature(secret, header, body, { now: t - 301 }), refused('stale'));
    assert.equal(verifyWebhookSignature(secret, header, body, { now: t + 3600, toleranceSeconds: 3601 }), t);
    assert.throws(() => verifyWebhookSignature(secret, header, body, { now: t + 1, toleranceSeconds: 0 }), refused('stale'));
    assert.equal(verifyWebhookSignature(secret, header, body, { now: t + 1e6, toleranceSeconds: Infinity }), t);
    // The default clock: a signature of 2027 is stale today or in the future; one of now is not.
    const fresh = Math.floor(Date.now() / 1000);
    assert.equal(verifyWebhookSignature(secret, sign(secret, fresh, body), body), fresh);
    assert.throws(() => verifyWebhookSignature(secret, sign(secret, fresh - 600, body), body), refused('stale'));
    // A mismatch is said first: a forged old request is forged, not just old.
    assert.throws(() => verifyWebhookSignature('whsec_another-one-9876', header, body, { now: t + 1000 }), refused('mismatch'));
    assert.throws(() => verifyWebhookSignature(secret, header, body, { now: t, toleranceSeconds: -1 }), TypeError);
    assert.throws(() => verifyWebhookSignature(secret, header, body, { now: Number.NaN }), TypeError);
    assert.throws(() => verifyWebhookSignature(secret, header, body, { now: new Date('nope') }), TypeError);
  });

  it('refuses malformed headers', () => {
    const v1 = sign(secret, t, body).split(',')[1] as string;
    for (const header of [undefined, null, '', 'garbage', [], v1, `t=,${v1}`, `t=abc,${v1}`, `t=-5,${v1}`, `t=1.5,${v1}`, `t=${t},t=${t},${v1}`, `t=${t}`, `t=${t},v2=abc`, `t=${t},v1`]) {
      assert.throws(() => verifyWebhookSignature(secret, header, body, { now }), refused('malformed'), JSON.stringify(header));
    }
  });
});

/** One delivery the receiver got. */
interface Received {
  readonly headers: IncomingHttpHeaders;
  readonly method: string | undefined;
  readonly path: string | undefined;
  /** The body as received. */
  readonly body: Buffer;
  /** The body parsed. */
  readonly payload: WebhookPayload;
}

/** A webhook receiver on a loopback port: keeps every request, answers 204. */
class Receiver {
  readonly received: Received[] = [];
  readonly waiters = new Set<() => void>();
  readonly #server: Server;

  private constructor(server: Server) {
    this.#server = server;
  }

  static async start(): Promise<Receiver> {
    let receiver: Receiver | undefined;
    const server = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        const body = Buffer.concat(chunks);
        receiver?.received.push({
          headers: request.headers,
          method: request.method,
          path: request.url,
          body,
          payload: JSON.parse(body.toString('utf8')) as WebhookPayload,
        });
        response.writeHead(204).end();
        for (const wake of receiver?.waiters ?? []) wake();
      });
    });
    receiver = new Receiver(server);
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    return receiver;
  }

  /** Its URL, e.g. `http://127.0.0.1:PORT/hooks`. */
  url(path = '/hooks'): string {
    const { port } = this.#server.address() as AddressInfo;
    return `http://127.0.0.1:${port}${path}`;
  }

  /** The first delivery (received or to come) that `match`es; fails after `timeoutMs`. */
  async next(match: (delivery: Received) => boolean, timeoutMs = 20_000): Promise<Received> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const found = this.received.find(match);
      if (found) return found;
      const left = deadline - Date.now();
      assert.ok(left > 0, `no matching delivery in ${timeoutMs} ms; got ${this.received.map((d) => d.payload.deliveryId).join(', ')}`);
      await new Promise<void>((resolve) => {
        const wake = (): void => {
          clearTimeout(timer);
          this.waiters.delete(wake);
          resolve();
        };
        const timer = setTimeout(wake, left);
        this.waiters.add(wake);
      });
    }
  }

  async close(): Promise<void> {
    this.#server.closeAllConnections();
    await new Promise((resolve) => this.#server.close(resolve));
  }
}

/** Polls a webhook's deliveries until `match` finds one; fails after `timeoutMs`. */
async function deliveryWhen(
  daemon: LocalSandboxDaemon,
  webhookId: string,
  match: (delivery: WebhookDelivery) => boolean,
  timeoutMs = 20_000,
): Promise<WebhookDelivery> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const deliveries = await collect(daemon.webhookDeliveries(webhookId));
    const found = deliveries.find(match);
    if (found) return found;
    assert.ok(Date.now() < deadline, `no matching delivery in ${timeoutMs} ms: ${JSON.stringify(deliveries)}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe('webhooks against the daemon', () => {
  let daemon: LocalSandboxDaemon;
  let receiver: Receiver;
  before(async () => {
    [daemon, receiver] = await Promise.all([startDaemon({ validate: true }), Receiver.start()]);
  });
  after(async () => {
    await Promise.all([daemon?.close(), receiver?.close()]);
  });

  it("delivers a mock turn's turnEnded, signed; it is listed delivered", async () => {
    const created = await daemon.createWebhook({ url: receiver.url(), events: ['turnEnded'] });
    assert.match(created.id, /^wh_/);
    assert.equal(created.url, receiver.url());
    assert.deepEqual(created.events, ['turnEnded']);
    assert.equal(created.sessionId, undefined, 'a daemon-wide webhook');
    const secret = created.secret;
    assert.ok(typeof secret === 'string' && secret.length >= 16, 'the daemon made a secret and answered it once');
    const { secret: _, ...webhook } = created;
    assert.deepEqual(await daemon.getWebhook(created.id), webhook, 'never the secret again');
    assert.deepEqual((await daemon.listWebhooks()).webhooks, [webhook]);

    const session = await daemon.startSession(uniqueId('hook'), { agent: 'mock' });
    const turn = await session.run('hello');
    assert.equal(turn.ended.stopReason, 'completed');
    const ended = turn.events.at(-1);
    assert.ok(ended?.type === 'turnEnded');

    const delivery = await receiver.next((d) => d.payload.event.sessionId === session.id);
    assert.equal(delivery.method, 'POST');
    assert.equal(delivery.path, '/hooks');
    assert.match(String(delivery.headers['content-type']), /^application\/json/);
    // The SDK's helper, with the secret the daemon made, on the body as received.
    const signature = delivery.headers[WEBHOOK_SIGNATURE_HEADER.toLowerCase()];
    const signedAt = verifyWebhookSignature(secret, signature, delivery.body);
    assert.ok(Math.abs(signedAt - Date.now() / 1000) < 60, `signed at ${signedAt}`);
    assert.throws(() => verifyWebhookSignature(`${secret}x`, signature, delivery.body), refused('mismatch'));
    assert.throws(() => verifyWebhookSignature(secret, signature, Buffer.concat([delivery.body, Buffer.from(' ')])), refused('mismatch'));

    const { payload } = delivery;
    const deliveryId = `${session.id}:${ended.sequence}`;
    assert.equal(payload.deliveryId, deliveryId);
    assert.equal(delivery.headers[WEBHOOK_ID_HEADER.toLowerCase()], deliveryId);
    assert.equal(payload.webhookId, created.id);
    assert.equal(payload.type, 'turnEnded');
    assert.deepEqual(payload.event, ended, 'the event as the log holds it');
    assert.deepEqual(
      receiver.received.filter((d) => d.payload.event.sessionId === session.id).map((d) => d.payload.type),
      ['turnEnded'],
      'only the types subscribed to',
    );

    const listed = await deliveryWhen(daemon, created.id, (d) => d.id === deliveryId && d.status === 'delivered');
    assert.equal(listed.webhookId, created.id);
    assert.equal(listed.sessionId, session.id);
    assert.equal(listed.sequence, ended.sequence);
    const type: EventType = listed.eventType; // the spec's EventType is the SDK's
    assert.equal(type, 'turnEnded');
    assert.equal(listed.attempts, 1);
    assert.equal(listed.lastStatusCode, 204);
    assert.ok(listed.finishedAt, 'finished');
    assert.equal(listed.nextAttemptAt ?? undefined, undefined);

    // Paging: a second turn, one delivery per page; webhookDeliveries follows nextCursor.
    const second = await session.run('hello again');
    await receiver.next((d) => d.payload.event.sessionId === session.id && d.payload.event.sequence === second.events.at(-1)?.sequence);
    const firstPage = await daemon.listWebhookDeliveries(created.id, { limit: 1 });
    assert.equal(firstPage.deliveries.length, 1);
    assert.equal(firstPage.deliveries[0]?.id, deliveryId, 'oldest first');
    assert.equal(typeof firstPage.nextCursor, 'string');
    const all = await collect(daemon.webhookDeliveries(created.id, { limit: 1 }));
    assert.deepEqual(
      all.map((d) => d.id),
      [deliveryId, `${session.id}:${second.events.at(-1)?.sequence}`],
    );
    await assert.rejects(daemon.listWebhookDeliveries(created.id, { limit: 0 }), isProblem(400, 'invalid-parameter'));

    assert.equal(await daemon.deleteWebhook(created.id), undefined);
    await assert.rejects(daemon.getWebhook(created.id), isProblem(404, 'webhook-not-found'));
    await assert.rejects(daemon.deleteWebhook(created.id), isProblem(404, 'webhook-not-found'));
    await assert.rejects(daemon.listWebhookDeliveries(created.id), isProblem(404, 'webhook-not-found'));
    assert.deepEqual((await daemon.listWebhooks()).webhooks, []);
  });

  it("a session's own webhook: its events only, signed with the secret given, gone with the session", async () => {
    const secret = 'session-secret-0123456789';
    const other = await daemon.startSession(uniqueId('other'), { agent: 'mock' });
    const id = uniqueId('own');
    const session = await daemon.startSession(id, {
      agent: 'mock',
      webhook: { url: receiver.url('/own'), events: ['turnStarted', 'turnEnded'], secret },
    });
    const [own] = (await daemon.listWebhooks()).webhooks;
    assert.ok(own, 'listed');
    assert.equal(own.sessionId, id);
    assert.equal(own.url, receiver.url('/own'));
    assert.equal('secret' in own, false);

    await other.run('hello');
    const turn = await session.run('hello');
    const ended = await receiver.next((d) => d.path === '/own' && d.payload.type === 'turnEnded');
    const started = await receiver.next((d) => d.path === '/own' && d.payload.type === 'turnStarted');
    for (const delivery of [started, ended]) {
      verifyWebhookSignature(secret, delivery.headers['sandbox-daemon-signature'], delivery.body);
      assert.equal(delivery.payload.webhookId, own.id);
      assert.equal(delivery.payload.event.sessionId, id);
    }
    assert.deepEqual(ended.payload.event, turn.events.at(-1));
    assert.ok(!receiver.received.some((d) => d.path === '/own' && d.payload.event.sessionId === other.id), 'not the other session');

    await session.delete();
    assert.deepEqual((await daemon.listWebhooks()).webhooks, []);
    await assert.rejects(daemon.getWebhook(own.id), isProblem(404, 'webhook-not-found'));
  });

  it('refuses a webhook it cannot deliver: 422 invalid-body', async () => {
    const url = receiver.url();
    for (const body of [
      { url, events: ['itemDelta'] },
      { url, events: [] },
      { url, events: ['turnEnded', 'turnEnded'] },
      { url: 'ftp://127.0.0.1/hooks', events: ['turnEnded'] },
      { url, events: ['turnEnded'], secret: 'short' },
    ]) {
      await assert.rejects(
        daemon.createWebhook(body as Parameters<LocalSandboxDaemon['createWebhook']>[0]),
        isProblem(422, 'invalid-body'),
        JSON.stringify(body),
      );
    }
    assert.deepEqual((await daemon.listWebhooks()).webhooks, []);
  });
});
