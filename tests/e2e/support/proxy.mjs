// A TCP proxy in front of `dynaslice serve` that slows what the browser
// sends (responses pass at full speed), so an upload on loopback lasts long
// enough to be interrupted part-way. When the browser's side closes, the
// server's side is cut at once (destroyed, not ended): the server sees a
// body that stops short, as it would if a real client vanished.
import { createServer, connect } from 'node:net';

/**
 * @param {string} target the server's URL (http://127.0.0.1:PORT)
 * @param {number} bytesPerSecond the browser-to-server rate
 * @returns {Promise<{ url: string, forwarded: () => number, close: () => Promise<void> }>}
 */
export async function slowProxy(target, bytesPerSecond) {
  const { hostname, port } = new URL(target);
  let forwarded = 0;
  const sockets = new Set();
  const server = createServer((client) => {
    const upstream = connect(Number(port), hostname);
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
  return {
    url: `http://127.0.0.1:${server.address().port}`,
    forwarded: () => forwarded,
    close: () =>
      new Promise((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
