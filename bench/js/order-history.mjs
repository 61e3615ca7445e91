// A realistic document to benchmark with: one customer's order history,
// ported from testing/src/order_history.rs. The same SplitMix64 seed
// draws the same random numbers in the same order, so the structure matches
// the Rust benchmark's document; the text differs only where JavaScript and
// serde_json print numbers differently (`5` here, `5.0` there).
//
// The document comes as compact JSON text with sorted keys, as serde_json
// writes it, and as the plain object an application gets by parsing it, with
// `tags` as Sets (as an application that models them as sets would store
// them, so they become SS, as in the Rust benchmark).

const MASK = (1n << 64n) - 1n;

/** SplitMix64 (Steele, Lea and Flood), exactly as the Rust generator. */
class SplitMix64 {
  constructor(seed) {
    this.state = BigInt(seed);
  }

  next() {
    this.state = (this.state + 0x9e3779b97f4a7c15n) & MASK;
    let z = this.state;
    z = ((z ^ (z >> 30n)) * 0xbf58476d1ce4e5b9n) & MASK;
    z = ((z ^ (z >> 27n)) * 0x94d049bb133111ebn) & MASK;
    return z ^ (z >> 31n);
  }

  /** A number in `0..n`. */
  below(n) {
    return Number(this.next() % BigInt(n));
  }

  chance(percent) {
    return this.below(100) < percent;
  }

  token(len) {
    const alphabet = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
    let out = '';
    for (let i = 0; i < len; i++) out += alphabet[this.below(alphabet.length)];
    return out;
  }

  uuid() {
    const a = this.next();
    const b = this.next();
    const hex = (v, width) => v.toString(16).padStart(width, '0');
    return (
      `${hex(a >> 32n, 8)}-${hex((a >> 16n) & 0xffffn, 4)}-4${hex(a & 0xfffn, 3)}-` +
      `${hex(((b >> 48n) & 0x3fffn) | 0x8000n, 4)}-${hex(b & 0xffffffffffffn, 12)}`
    );
  }

  pick(from) {
    return from[this.below(from.length)];
  }
}

const pad = (n, width) => String(n).padStart(width, '0');

/**
 * An order history whose item is at least `target` bytes by `valueSize`
 * (the exact size of a value, from dynaslice), like the Rust generator.
 * @param {number} seed
 * @param {number} target
 * @param {(value: unknown) => number} valueSize
 */
export function orderHistory(seed, target, valueSize) {
  const rng = new SplitMix64(seed);
  const customerId = `C-${pad(rng.below(1_000_000), 6)}`;
  const addresses = [0, 1, 2].map((i) => address(rng, i === 0));
  const doc = {
    customer: customer(rng, customerId),
    addresses,
    paymentMethods: [0, 1].map((i) => paymentMethod(rng, i === 0)),
    updatedAt: timestamp(rng),
    schemaVersion: 3,
  };
  const item = { ...doc, pk: `customer#${customerId}` };
  // An `L` costs 3 bytes, and each element 1 more than its value.
  let size = valueSize(item) - 3 - Object.keys(item).length + 'orders'.length + 3;
  const orders = [];
  while (size < target) {
    const o = order(rng, orders.length, addresses);
    size += 1 + valueSize(o);
    orders.push(o);
  }
  doc.orders = orders;
  const text = JSON.stringify(sortedForJson(doc));
  // The item as an application would hold it after parsing the JSON: flat
  // strings (not the concatenations built above), tags as Sets, plus its key.
  const parsed = JSON.parse(text, (key, value) => (key === 'tags' ? new Set(value) : value));
  return { item: { pk: item.pk, ...parsed }, json: new TextEncoder().encode(text) };
}

/** `len` bytes no codec can shrink, from a fixed seed. */
export function randomBytes(seed, len) {
  const rng = new SplitMix64(seed);
  const out = new Uint8Array(Math.ceil(len / 8) * 8);
  const view = new DataView(out.buffer);
  for (let i = 0; i < out.length; i += 8) view.setBigUint64(i, rng.next(), true);
  return out.subarray(0, len);
}

/** Keys sorted and Sets as arrays, as serde_json serializes the Rust document. */
function sortedForJson(value) {
  if (value instanceof Set) return [...value];
  if (Array.isArray(value)) return value.map(sortedForJson);
  if (value !== null && typeof value === 'object') {
    const out = {};
    for (const key of Object.keys(value).sort()) out[key] = sortedForJson(value[key]);
    return out;
  }
  return value;
}

function customer(rng, id) {
  const first = rng.pick(FIRST_NAMES);
  const last = rng.pick(LAST_NAMES);
  return {
    id,
    name: `${first} ${last}`,
    email: `${first.toLowerCase()}.${last.toLowerCase()}@${rng.pick(DOMAINS)}`,
    phone: `+1-${pad(200 + rng.below(800), 3)}-${pad(rng.below(1000), 3)}-${pad(rng.below(10_000), 4)}`,
    since: timestamp(rng),
    tier: rng.pick(['bronze', 'silver', 'gold', 'platinum']),
    marketingOptIn: rng.chance(60),
    loyaltyPoints: rng.below(250_000),
    tags: tags(rng, CUSTOMER_TAGS, 1),
    preferences: {
      language: rng.pick(['en-US', 'en-GB', 'fr-FR', 'de-DE', 'es-ES']),
      currency: rng.pick(CURRENCIES),
      newsletter: rng.chance(40),
      smsAlerts: rng.chance(25),
    },
  };
}

function address(rng, isDefault) {
  return {
    label: rng.pick(['home', 'work', 'parents', 'holiday']),
    line1: `${1 + rng.below(9_999)} ${rng.pick(STREETS)} ${rng.pick(['St', 'Ave', 'Rd', 'Blvd', 'Lane'])}`,
    line2: rng.chance(30) ? `Apt ${1 + rng.below(400)}` : null,
    city: rng.pick(CITIES),
    region: rng.pick(['CA', 'NY', 'TX', 'WA', 'IL', 'MA', 'OR', 'CO']),
    postalCode: pad(rng.below(100_000), 5),
    country: 'US',
    isDefault,
  };
}

function paymentMethod(rng, isDefault) {
  return {
    type: 'card',
    brand: rng.pick(['visa', 'mastercard', 'amex', 'discover']),
    last4: pad(rng.below(10_000), 4),
    expires: `${pad(1 + rng.below(12), 2)}/${2027 + rng.below(6)}`,
    default: isDefault,
  };
}

function order(rng, index, addresses) {
  const currency = rng.pick(CURRENCIES);
  const count = 1 + rng.below(8);
  const lines = [];
  for (let i = 0; i < count; i++) lines.push(lineItem(rng));
  const subtotal = lines
    .map((l) => Math.round(l.unitPrice * l.quantity * 100))
    .reduce((a, b) => a + b, 0);
  const tax = Math.floor((subtotal * 8) / 100);
  const shipping = subtotal > 5_000 ? 0 : 499;
  const o = {
    orderId: `ORD-2026-${pad(index, 7)}`,
    paymentId: `pi_${rng.token(24)}`,
    placedAt: timestamp(rng),
    status: rng.pick(STATUSES),
    currency,
    items: lines,
    subtotal: money(subtotal),
    tax: money(tax),
    shipping: money(shipping),
    total: money(subtotal + tax + shipping),
    shippingAddress: { ...addresses[rng.below(addresses.length)] },
  };
  const shipmentCount = rng.below(3);
  o.shipments = [];
  for (let i = 0; i < shipmentCount; i++) o.shipments.push(shipment(rng));
  const notes = rng.below(4);
  o.notes = notes === 0 ? null : notes === 1 ? '' : sentence(rng, 8 + rng.below(40));
  if (rng.chance(50)) o.tags = tags(rng, ORDER_TAGS, 1);
  o.flags = { fraudReviewed: rng.chance(10), expedited: rng.chance(20), firstOrder: index === 0 };
  return o;
}

function lineItem(rng) {
  const product = rng.pick(PRODUCTS);
  return {
    sku: `SKU-${product.slice(0, 3).toUpperCase()}-${pad(rng.below(100_000), 5)}`,
    productId: rng.uuid(),
    image: `https://cdn.example.com/p/${rng.token(16)}.jpg`,
    name: `${rng.pick(ADJECTIVES)} ${product}`,
    quantity: 1 + rng.below(4),
    unitPrice: money(99 + rng.below(19_900)),
    discount: rng.chance(25) ? money(rng.below(1_000)) : null,
    giftWrap: rng.chance(10),
    attributes: {
      color: rng.pick(['black', 'white', 'red', 'blue', 'green', 'grey', 'natural']),
      size: rng.pick(['XS', 'S', 'M', 'L', 'XL', 'one size']),
    },
  };
}

function shipment(rng) {
  const count = 1 + rng.below(5);
  const events = [];
  for (let i = 0; i < count; i++) {
    events.push({
      at: timestamp(rng),
      code: rng.pick(['LABEL_CREATED', 'PICKED_UP', 'IN_TRANSIT', 'OUT_FOR_DELIVERY', 'DELIVERED']),
      location: rng.pick(CITIES),
    });
  }
  return {
    carrier: rng.pick(['UPS', 'FedEx', 'USPS', 'DHL']),
    tracking: `1Z${rng.next().toString(16).toUpperCase().padStart(16, '0')}`,
    shippedAt: timestamp(rng),
    deliveredAt: rng.chance(70) ? timestamp(rng) : null,
    events,
  };
}

/** A price: cents as a number with two decimals at most (`19.99`). */
const money = (cents) => cents / 100;

/** An ISO 8601 UTC timestamp in 2024–2026. */
function timestamp(rng) {
  const year = 2024 + rng.below(3);
  const month = pad(1 + rng.below(12), 2);
  const day = pad(1 + rng.below(28), 2);
  const hour = pad(rng.below(24), 2);
  const minute = pad(rng.below(60), 2);
  const second = pad(rng.below(60), 2);
  return `${year}-${month}-${day}T${hour}:${minute}:${second}.${pad(rng.below(1000), 3)}Z`;
}

/** Distinct tags (a set must not repeat members), at least `min`. */
function tags(rng, from, min) {
  const picked = from.filter(() => rng.chance(25));
  while (picked.length < min) {
    const tag = rng.pick(from);
    if (!picked.includes(tag)) picked.push(tag);
  }
  return new Set(picked);
}

function sentence(rng, words) {
  const out = [];
  for (let i = 0; i < words; i++) out.push(rng.pick(WORDS));
  return `${out.join(' ')}.`;
}

const FIRST_NAMES = ['Ada', 'Grace', 'Linus', 'Margaret', 'Dennis', 'Barbara', 'Ken', 'Frances', 'Edsger', 'Radia'];
const LAST_NAMES = ['Lovelace', 'Hopper', 'Torvalds', 'Hamilton', 'Ritchie', 'Liskov', 'Thompson', 'Allen'];
const DOMAINS = ['example.com', 'mail.example.org', 'corp.example.net'];
const STREETS = ['Maple', 'Oak', 'Pine', 'Cedar', 'Elm', 'Washington', 'Lake', 'Hill', 'Sunset', 'Park'];
const CITIES = ['Seattle', 'Portland', 'Denver', 'Austin', 'Chicago', 'Boston', 'New York', 'San Jose', 'Sacramento', 'Dallas'];
const CURRENCIES = ['USD', 'EUR', 'GBP', 'CAD'];
const STATUSES = ['PLACED', 'PAID', 'PACKED', 'SHIPPED', 'DELIVERED', 'RETURNED', 'CANCELLED'];
const PRODUCTS = [
  'Coffee Grinder', 'Trail Shoes', 'Wool Sweater', 'Desk Lamp', 'Water Bottle', 'Backpack',
  'Headphones', 'Notebook', 'Cast Iron Pan', 'Yoga Mat', 'Rain Jacket', 'Phone Case',
];
const ADJECTIVES = ['Classic', 'Ultralight', 'Organic', 'Premium', 'Compact', 'Vintage', 'Everyday', 'Pro'];
const CUSTOMER_TAGS = ['vip', 'wholesale', 'newsletter', 'beta', 'employee', 'churn-risk'];
const ORDER_TAGS = ['gift', 'priority', 'bulk', 'subscription', 'promo', 'backorder'];
const WORDS = [
  'please', 'leave', 'the', 'package', 'at', 'back', 'door', 'gift', 'for', 'my', 'sister', 'call',
  'before', 'delivery', 'fragile', 'handle', 'with', 'care', 'customer', 'requested', 'refund',
  'replacement', 'arrived', 'damaged', 'box', 'was', 'wet', 'left', 'with', 'neighbour', 'ring',
  'bell', 'twice', 'no', 'invoice', 'in', 'parcel', 'wrong', 'size', 'exchange', 'approved', 'by',
  'support', 'agent', 'ticket', 'follow', 'up', 'next', 'week',
];
