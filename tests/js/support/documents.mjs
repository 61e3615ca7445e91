// Test documents shared by the suites that store items in DynamoDB Local:
// realistic order histories of any size (they compress like real JSON).
import { itemSize } from 'dynaslice';

const KB = 1024;

/** Deterministic pseudo-random numbers (mulberry32), so documents compress like real ones. */
export function prng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const PRODUCTS = ['espresso machine', 'running shoes', 'desk lamp', 'noise-cancelling headphones', 'yoga mat', 'cast-iron pan', 'e-reader', 'backpack', 'thermos', 'mechanical keyboard'];
const CITIES = ['Zürich', 'München', 'Lisboa', 'Kraków', 'Göteborg', 'Sevilla', 'Ljubljana', 'Tallinn'];
const STATUSES = ['pending', 'paid', 'shipped', 'delivered', 'returned'];

/**
 * A realistic order-history document (plain JavaScript values) of at least
 * `bytes` bytes by DynamoDB's count: nested maps and lists, numbers with
 * fractions, string sets, booleans, nulls, non-ASCII text.
 */
export function orderHistory(key, bytes, seed) {
  const rnd = prng(seed);
  const pick = (list) => list[Math.floor(rnd() * list.length)];
  const order = (i) => {
    const lines = Array.from({ length: 1 + Math.floor(rnd() * 4) }, (_, j) => ({
      sku: `SKU-${(seed * 7919 + i * 31 + j).toString(36).toUpperCase()}`,
      name: pick(PRODUCTS),
      qty: 1 + Math.floor(rnd() * 3),
      unitPrice: Math.round(rnd() * 50_000) / 100,
    }));
    return {
      id: `ord-${seed}-${String(i).padStart(6, '0')}`,
      placedAt: new Date(Date.UTC(2026, 0, 1) + Math.floor(rnd() * 3e10)).toISOString(),
      status: pick(STATUSES),
      total: Math.round(lines.reduce((sum, l) => sum + l.qty * l.unitPrice, 0) * 100) / 100,
      currency: 'EUR',
      lines,
      shipping: { city: pick(CITIES), postcode: String(10_000 + Math.floor(rnd() * 89_999)), express: rnd() < 0.2 },
      gift: rnd() < 0.1,
      note: rnd() < 0.7 ? null : `Bitte beim Nachbarn abgeben (${pick(CITIES)}) — merci!`,
      tags: new Set(['web', pick(['promo', 'repeat', 'first']), `q${1 + Math.floor(rnd() * 4)}`]),
    };
  };
  const item = {
    ...key,
    kind: 'order-history',
    owner: { name: 'Zoë Ångström', email: 'zoe@example.com', since: 2019, vip: true },
    loyalty: { points: 123_456, ratio: 0.015, level: -3 },
    orders: [],
  };
  let size = itemSize(item, { format: 'plain' });
  while (size < bytes) {
    // Grow by batches, each measured on its own (a list element costs 1 byte plus its value).
    const batch = Array.from({ length: size < 4 * KB ? 1 : 256 }, (_, i) => order(item.orders.length + i));
    size += itemSize({ x: batch }, { format: 'plain' }) - itemSize({ x: [] }, { format: 'plain' });
    item.orders.push(...batch);
  }
  return item;
}
