import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** Rewrites a JSON response body; return undefined to pass it through untouched. */
export type Corruption = (path: string, body: unknown) => unknown;

/**
 * A loopback HTTP proxy in front of the simulator that rewrites chosen JSON responses, standing
 * for a service that sends malformed data.
 */
export async function startCorruptingProxy(
  target: string,
  corrupt: Corruption,
): Promise<{ url: string; close(): Promise<void> }> {
  const server: Server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(req.headers)) {
      if (typeof value === 'string' && name !== 'host' && name !== 'content-length')
        headers[name] = value;
    }
    const upstream = await fetch(`${target}${req.url}`, {
      method: req.method,
      headers,
      body: chunks.length > 0 ? Buffer.concat(chunks) : undefined,
    });
    let text = await upstream.text();
    if (upstream.headers.get('content-type')?.includes('json')) {
      const changed = corrupt(new URL(req.url!, 'http://x').pathname, JSON.parse(text));
      if (changed !== undefined)
        text = typeof changed === 'string' ? changed : JSON.stringify(changed);
    }
    // The service's Date header passes through: it is its clock the mirror settles reads on.
    const date = upstream.headers.get('date');
    res.writeHead(upstream.status, {
      'content-type': upstream.headers.get('content-type') ?? 'application/json',
      ...(date && { date }),
    });
    res.end(text);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
