// A realistic order-history document, generated in JavaScript: one
// customer's orders with addresses, lines, payments and delivery events.
// Deterministic for a given size (seeded PRNG), so a test in Node builds
// exactly the document the page shows. No DOM or browser APIs: Node imports
// this file as it is.

/**
 * Sample sizes offered on the page, in bytes. MB here is DynamoDB's unit
 * (1,048,576 bytes; its 400 KB limit is 409,600 bytes).
 */
export const SAMPLE_SIZES = [1 << 20, 5 << 20, 20 << 20];

/** A small, fast, seedable PRNG (mulberry32): the same seed, the same document. */
function prng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const FIRST = ['Amélie', 'Jonas', 'Priya', 'Mateo', 'Zoë', 'Liam', 'Aiko', 'Noah', 'Fatima', 'Lars', 'Chloé', 'Omar', 'Sofía', 'Ines', 'Björn', 'Mei'];
const LAST = ['Müller', 'Dubois', 'Sharma', 'García', 'Nakamura', 'Okafor', 'Rossi', 'Kowalski', 'Jensen', 'Silva', 'Nguyen', 'Haddad', 'Novák', 'Ó Briain'];
const STREETS = ['Rue de Rivoli', 'Hauptstraße', 'Calle Mayor', 'High Street', 'Via Roma', 'Nørregade', 'Rua Augusta', 'Main Street', 'Kungsgatan', 'Ulica Długa'];
const CITIES = [
  ['Paris', '75001', 'FR'], ['München', '80331', 'DE'], ['Madrid', '28013', 'ES'], ['London', 'SW1A 1AA', 'GB'],
  ['Roma', '00184', 'IT'], ['København', '1165', 'DK'], ['Lisboa', '1100-053', 'PT'], ['Dublin', 'D02 X285', 'IE'],
  ['Stockholm', '111 43', 'SE'], ['Gdańsk', '80-831', 'PL'], ['São Paulo', '01310-100', 'BR'], ['Toronto', 'M5H 2N2', 'CA'],
];
const PRODUCTS = [
  ['Stainless steel water bottle, 750 ml', 18.9], ['Merino wool socks (3 pairs)', 24.5], ['Wireless earbuds with charging case', 79],
  ['Cast iron skillet, 28 cm', 42.75], ['Organic green tea, 100 bags', 9.99], ['Yoga mat, non-slip, 6 mm', 31.2],
  ['USB-C charging cable, 2 m', 12.49], ['Hardcover notebook, dotted, A5', 14], ['Ceramic pour-over coffee dripper', 27.5],
  ['LED desk lamp with dimmer', 54.9], ['Running shoes, trail', 119.95], ['Linen bed sheet set, queen', 139],
  ['Backpack, 24 l, water-resistant', 68.4], ['Chef’s knife, 20 cm', 89], ['Board game: “Harbour Lights”', 36.99],
  ['Bamboo cutting board', 19.95], ['Noise-cancelling headphones', 249], ['Sunscreen SPF 50, 200 ml', 15.8],
];
const STATUS = ['delivered', 'delivered', 'delivered', 'delivered', 'shipped', 'processing', 'cancelled', 'returned'];
const CHANNELS = ['web', 'ios-app', 'android-app', 'store', 'phone'];
const CARDS = ['visa', 'mastercard', 'amex', 'maestro'];
const CARRIERS = ['DHL', 'UPS', 'La Poste', 'PostNord', 'GLS', 'DPD'];
const NOTES = [
  'Please leave the parcel with the neighbour at number 12 if nobody answers.',
  'Gift wrap, and no invoice in the box please.',
  'Deliver after 6 pm on weekdays.',
  'Ring twice — the bell is quiet.',
  'Customer asked to combine with the previous order if it has not shipped yet.',
];

function pick(random, list) {
  return list[Math.floor(random() * list.length)];
}

function hex(random, length) {
  let s = '';
  for (let i = 0; i < length; i += 1) s += Math.floor(random() * 16).toString(16);
  return s;
}

function money(value) {
  return Math.round(value * 100) / 100;
}

function order(random, index, customer, start) {
  const placed = start + index * 3_600_000 * (6 + Math.floor(random() * 40));
  const [city, postalCode, country] = pick(random, CITIES);
  const lines = [];
  const count = 1 + Math.floor(random() * 5);
  for (let i = 0; i < count; i += 1) {
    const [title, price] = pick(random, PRODUCTS);
    const qty = 1 + Math.floor(random() * 3);
    const discount = random() < 0.2 ? money(price * qty * 0.1) : 0;
    lines.push({ lineId: i + 1, sku: `SKU-${10000 + Math.floor(random() * 89999)}`, title, qty, unitPrice: price, discount });
  }
  const subtotal = money(lines.reduce((sum, l) => sum + l.unitPrice * l.qty - l.discount, 0));
  const shipping = subtotal > 50 ? 0 : 4.95;
  const tax = money(subtotal * 0.2);
  const status = pick(random, STATUS);
  const events = [{ at: new Date(placed).toISOString(), type: 'placed' }];
  if (status !== 'cancelled') events.push({ at: new Date(placed + 1_800_000 + random() * 7_200_000).toISOString(), type: 'paid' });
  if (status === 'shipped' || status === 'delivered' || status === 'returned') {
    events.push({ at: new Date(placed + 86_400_000 * (1 + random() * 2)).toISOString(), type: 'shipped', carrier: pick(random, CARRIERS) });
  }
  if (status === 'delivered' || status === 'returned') events.push({ at: new Date(placed + 86_400_000 * (3 + random() * 4)).toISOString(), type: 'delivered' });
  if (status === 'returned') events.push({ at: new Date(placed + 86_400_000 * (10 + random() * 10)).toISOString(), type: 'returned', reason: 'wrong size' });
  if (status === 'cancelled') events.push({ at: new Date(placed + 600_000).toISOString(), type: 'cancelled', by: 'customer' });
  return {
    orderId: `ORD-${new Date(placed).getUTCFullYear()}-${String(100000 + index).padStart(7, '0')}`,
    placedAt: new Date(placed).toISOString(),
    status,
    channel: pick(random, CHANNELS),
    currency: country === 'GB' ? 'GBP' : country === 'BR' ? 'BRL' : country === 'CA' ? 'CAD' : 'EUR',
    shipTo: {
      name: customer.name,
      street: `${pick(random, STREETS)} ${1 + Math.floor(random() * 180)}`,
      city,
      postalCode,
      country,
    },
    lines,
    subtotal,
    shipping,
    tax,
    total: money(subtotal + shipping + tax),
    payment: { method: 'card', brand: pick(random, CARDS), last4: String(Math.floor(random() * 10000)).padStart(4, '0'), authCode: hex(random, 8).toUpperCase() },
    tracking: status === 'processing' || status === 'cancelled' ? null : `${hex(random, 4).toUpperCase()}${Math.floor(random() * 1e10)}`,
    events,
    ...(random() < 0.15 ? { note: pick(random, NOTES) } : {}),
    sessionId: `${hex(random, 8)}-${hex(random, 4)}-${hex(random, 4)}-${hex(random, 4)}-${hex(random, 12)}`,
  };
}

/**
 * An order-history JSON document of about `targetBytes` UTF-8 bytes (a
 * little over: whole orders only), as text. The same size gives the same text.
 * @param {number} targetBytes
 * @returns {string}
 */
export function orderHistory(targetBytes) {
  const random = prng(targetBytes);
  const customer = {
    customerId: `C-${String(Math.floor(random() * 1e6)).padStart(6, '0')}`,
    name: `${pick(random, FIRST)} ${pick(random, LAST)}`,
    email: 'customer@example.com',
    memberSince: '2017-04-02',
    tier: 'gold',
  };
  const head = `{"customer":${JSON.stringify(customer)},"generatedAt":"2026-11-21T00:00:00.000Z","orders":[`;
  const tail = ']}';
  const encoder = new TextEncoder();
  const parts = [];
  let bytes = encoder.encode(head).length + tail.length;
  const start = Date.UTC(2015, 0, 1);
  for (let i = 0; bytes < targetBytes; i += 1) {
    const text = JSON.stringify(order(random, i, customer, start));
    // Most of the text is ASCII; count UTF-8 bytes exactly all the same.
    bytes += encoder.encode(text).length + (i > 0 ? 1 : 0);
    parts.push(text);
  }
  return head + parts.join(',') + tail;
}
