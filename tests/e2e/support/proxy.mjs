// A TCP proxy in front of `dynaslice serve` that slows what the browser
// sends (responses pass at full speed), so an upload on loopback lasts long
// enough to be interrupted part-way. When the browser's side closes, the
// server's side is cut at once (destroyed, not ended): the server sees a
// body that stops short, as it would if a real client vanished.
//
// The proxy listens before the server starts: the browser addresses the
// proxy, so its `Host` and `Origin` name the proxy's port, which the server
// must be told to allow (`--allow-host 127.0.0.1:PROXYPORT`).
import { createServer, connect } from 'node:net';

/**
 * @param {number} bytesPerSecond the browser-to-server rate
 * @returns {Promise<{ url: string, host: string, forwardTo: (target: string) => void, forwarded: () => number, close: () => Promise<void> }>}
 */
export async function slowProxy(bytesPerSecond) {
  let target = null;
  let forwarded = 0;
  const sockets = new Set();
  const server = createServer((client) => {
    if (target === null) {
      client.destroy();
      return;
    }
    const upstream = connect(Number(target.port), target.hostname);
    sockets.add(client).add(upstream);
    upstream.on('data', (data) => client.write(data));
    client.on('data', (data) => {
      client.pause();
      upstream.write(data);
      forwarded += data.length;
      setTimeout(() => client.resume(), (data.length / bytesPerSecond) * 1000);
    });
    const cut = () => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    for (const socket of [client, upstream]) {
      socket.on('end', cut);
      socket.on('error', cut);
      socket.on('close', cut);
    }
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const host = `127.0.0.1:${server.address().port}`;
  return {
    url: `http://${host}`,
    /** The proxy's `host:port`, as the browser names it in `Host` and `Origin`. */
    host,
    /** Where connections go from now on: the server's URL (http://127.0.0.1:PORT). */
    forwardTo: (url) => {
      target = new URL(url);
    },
    forwarded: () => forwarded,
    close: () =>
      new Promise((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
