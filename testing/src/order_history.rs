//! A realistic JSON document to benchmark with: one customer's order history
//! (profile, addresses, payment methods, orders with line items, shipments
//! and tracking events, free-text notes), generated from a fixed seed so
//! every run measures the same bytes.
//!
//! The JSON text is what users store today as one String or Binary
//! attribute; the [`Item`] is the same document as DynamoDB types, made the
//! way SDK marshallers do it (object to `M`, array to `L`, number to `N` with
//! its JSON text), except that `tags` arrays become `SS`, as an application
//! that models them as sets would store them.

use std::collections::BTreeMap;

use dynaslice_core::{AttributeValue, Item, KeySchema, KeyType, item_size, value_size};
use serde_json::{Map, Number, Value, json};

/// The partition key attribute of the benchmark table.
pub const PARTITION_KEY: &str = "pk";

/// The benchmark table's key schema: a string partition key.
pub fn key_schema() -> KeySchema {
    KeySchema::partition(PARTITION_KEY, KeyType::S)
}

/// One generated document, as DynamoDB item and as compact JSON text.
pub struct OrderHistory {
    /// The document as an item, keyed by [`PARTITION_KEY`].
    pub item: Item,
    /// The same document serialized as compact JSON.
    pub json: Vec<u8>,
}

/// Generates an order history whose item is at least `target` bytes by
/// [`dynaslice_core::item_size`] (it overshoots by at most one order).
pub fn order_history(seed: u64, target: usize) -> OrderHistory {
    let mut rng = SplitMix64(seed);
    let customer_id = format!("C-{:06}", rng.below(1_000_000));
    let addresses: Vec<Value> = (0..3).map(|i| address(&mut rng, i == 0)).collect();
    let mut doc = json!({
        "customer": customer(&mut rng, &customer_id),
        "addresses": addresses,
        "paymentMethods": (0..2).map(|i| payment_method(&mut rng, i == 0)).collect::<Vec<_>>(),
        "updatedAt": timestamp(&mut rng),
        "schemaVersion": 3,
    });
    let mut item: Item = doc
        .as_object()
        .expect("object")
        .iter()
        .map(|(name, value)| (name.clone(), to_attribute(name, value)))
        .collect();
    item.insert(
        PARTITION_KEY.into(),
        AttributeValue::S(format!("customer#{customer_id}")),
    );
    // An `L` costs 3 bytes, and each element 1 more than its value.
    let mut size = item_size(&item) + "orders".len() + 3;
    let (mut orders, mut order_values) = (Vec::new(), Vec::new());
    while size < target {
        let order = order(&mut rng, orders.len(), &addresses);
        let value = to_attribute("", &order);
        size += 1 + value_size(&value);
        orders.push(order);
        order_values.push(value);
    }
    doc["orders"] = Value::Array(orders);
    item.insert("orders".into(), AttributeValue::L(order_values));
    let json = serde_json::to_vec(&doc).expect("a JSON value serializes");
    OrderHistory { item, json }
}

/// `len` bytes that no codec can shrink, from a fixed seed.
pub fn random_bytes(seed: u64, len: usize) -> Vec<u8> {
    let mut rng = SplitMix64(seed);
    let mut out = Vec::with_capacity(len + 8);
    while out.len() < len {
        out.extend_from_slice(&rng.next().to_le_bytes());
    }
    out.truncate(len);
    out
}

/// A JSON value as a DynamoDB attribute value; `name` is the field holding it.
fn to_attribute(name: &str, value: &Value) -> AttributeValue {
    match value {
        Value::Null => AttributeValue::Null,
        Value::Bool(b) => AttributeValue::Bool(*b),
        Value::Number(n) => AttributeValue::N(n.to_string()),
        Value::String(s) => AttributeValue::S(s.clone()),
        Value::Array(members) if name == "tags" => AttributeValue::Ss(
            members
                .iter()
                .map(|m| m.as_str().expect("tags are strings").to_owned())
                .collect(),
        ),
        Value::Array(list) => AttributeValue::L(list.iter().map(|v| to_attribute("", v)).collect()),
        Value::Object(map) => AttributeValue::M(
            map.iter()
                .map(|(k, v)| (k.clone(), to_attribute(k, v)))
                .collect::<BTreeMap<_, _>>(),
        ),
    }
}

fn customer(rng: &mut SplitMix64, id: &str) -> Value {
    let first = rng.pick(FIRST_NAMES);
    let last = rng.pick(LAST_NAMES);
    json!({
        "id": id,
        "name": format!("{first} {last}"),
        "email": format!("{}.{}@{}", first.to_lowercase(), last.to_lowercase(), rng.pick(DOMAINS)),
        "phone": format!("+1-{:03}-{:03}-{:04}", 200 + rng.below(800), rng.below(1000), rng.below(10_000)),
        "since": timestamp(rng),
        "tier": rng.pick(&["bronze", "silver", "gold", "platinum"]),
        "marketingOptIn": rng.chance(60),
        "loyaltyPoints": rng.below(250_000),
        "tags": tags(rng, CUSTOMER_TAGS, 1),
        "preferences": {
            "language": rng.pick(&["en-US", "en-GB", "fr-FR", "de-DE", "es-ES"]),
            "currency": rng.pick(CURRENCIES),
            "newsletter": rng.chance(40),
            "smsAlerts": rng.chance(25),
        },
    })
}

fn address(rng: &mut SplitMix64, default: bool) -> Value {
    json!({
        "label": rng.pick(&["home", "work", "parents", "holiday"]),
        "line1": format!("{} {} {}", 1 + rng.below(9_999), rng.pick(STREETS), rng.pick(&["St", "Ave", "Rd", "Blvd", "Lane"])),
        "line2": if rng.chance(30) { json!(format!("Apt {}", 1 + rng.below(400))) } else { Value::Null },
        "city": rng.pick(CITIES),
        "region": rng.pick(&["CA", "NY", "TX", "WA", "IL", "MA", "OR", "CO"]),
        "postalCode": format!("{:05}", rng.below(100_000)),
        "country": "US",
        "isDefault": default,
    })
}

fn payment_method(rng: &mut SplitMix64, default: bool) -> Value {
    json!({
        "type": "card",
        "brand": rng.pick(&["visa", "mastercard", "amex", "discover"]),
        "last4": format!("{:04}", rng.below(10_000)),
        "expires": format!("{:02}/{}", 1 + rng.below(12), 2027 + rng.below(6)),
        "default": default,
    })
}

fn order(rng: &mut SplitMix64, index: usize, addresses: &[Value]) -> Value {
    let currency = rng.pick(CURRENCIES);
    let lines: Vec<Value> = (0..1 + rng.below(8)).map(|_| line_item(rng)).collect();
    let subtotal: u64 = lines
        .iter()
        .map(|l| l["unitPrice"].as_f64().expect("price") * l["quantity"].as_f64().expect("qty"))
        .map(|p| (p * 100.0).round() as u64)
        .sum();
    let tax = subtotal * 8 / 100;
    let shipping = if subtotal > 5_000 { 0 } else { 499 };
    let mut order = Map::new();
    order.insert("orderId".into(), json!(format!("ORD-2026-{index:07}")));
    order.insert("paymentId".into(), json!(format!("pi_{}", rng.token(24))));
    order.insert("placedAt".into(), json!(timestamp(rng)));
    order.insert("status".into(), json!(rng.pick(STATUSES)));
    order.insert("currency".into(), json!(currency));
    order.insert("items".into(), Value::Array(lines));
    order.insert("subtotal".into(), money(subtotal));
    order.insert("tax".into(), money(tax));
    order.insert("shipping".into(), money(shipping));
    order.insert("total".into(), money(subtotal + tax + shipping));
    order.insert(
        "shippingAddress".into(),
        addresses[rng.below(addresses.len() as u64) as usize].clone(),
    );
    let shipments: Vec<Value> = (0..rng.below(3)).map(|_| shipment(rng)).collect();
    order.insert("shipments".into(), Value::Array(shipments));
    order.insert(
        "notes".into(),
        match rng.below(4) {
            0 => Value::Null,
            1 => json!(""),
            _ => {
                let words = 8 + rng.below(40) as usize;
                json!(sentence(rng, words))
            }
        },
    );
    if rng.chance(50) {
        order.insert("tags".into(), json!(tags(rng, ORDER_TAGS, 1)));
    }
    order.insert(
        "flags".into(),
        json!({
            "fraudReviewed": rng.chance(10),
            "expedited": rng.chance(20),
            "firstOrder": index == 0,
        }),
    );
    Value::Object(order)
}

fn line_item(rng: &mut SplitMix64) -> Value {
    let product = rng.pick(PRODUCTS);
    json!({
        "sku": format!("SKU-{}-{:05}", &product[..3].to_uppercase(), rng.below(100_000)),
        "productId": rng.uuid(),
        "image": format!("https://cdn.example.com/p/{}.jpg", rng.token(16)),
        "name": format!("{} {}", rng.pick(ADJECTIVES), product),
        "quantity": 1 + rng.below(4),
        "unitPrice": money(99 + rng.below(19_900)),
        "discount": if rng.chance(25) { money(rng.below(1_000)) } else { Value::Null },
        "giftWrap": rng.chance(10),
        "attributes": {
            "color": rng.pick(&["black", "white", "red", "blue", "green", "grey", "natural"]),
            "size": rng.pick(&["XS", "S", "M", "L", "XL", "one size"]),
        },
    })
}

fn shipment(rng: &mut SplitMix64) -> Value {
    let events: Vec<Value> = (0..1 + rng.below(5))
        .map(|_| {
            json!({
                "at": timestamp(rng),
                "code": rng.pick(&["LABEL_CREATED", "PICKED_UP", "IN_TRANSIT", "OUT_FOR_DELIVERY", "DELIVERED"]),
                "location": rng.pick(CITIES),
            })
        })
        .collect();
    json!({
        "carrier": rng.pick(&["UPS", "FedEx", "USPS", "DHL"]),
        "tracking": format!("1Z{:016X}", rng.next()),
        "shippedAt": timestamp(rng),
        "deliveredAt": if rng.chance(70) { json!(timestamp(rng)) } else { Value::Null },
        "events": events,
    })
}

/// A price: cents as a JSON number with two decimals at most (`19.99`).
fn money(cents: u64) -> Value {
    Value::Number(Number::from_f64(cents as f64 / 100.0).expect("finite"))
}

/// An ISO 8601 UTC timestamp in 2024–2026.
fn timestamp(rng: &mut SplitMix64) -> String {
    format!(
        "{}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z",
        2024 + rng.below(3),
        1 + rng.below(12),
        1 + rng.below(28),
        rng.below(24),
        rng.below(60),
        rng.below(60),
        rng.below(1000)
    )
}

/// Distinct tags (a set must not repeat members), at least `min`.
fn tags(rng: &mut SplitMix64, from: &[&str], min: usize) -> Vec<String> {
    let mut picked: Vec<String> = from
        .iter()
        .filter(|_| rng.chance(25))
        .map(|t| (*t).to_owned())
        .collect();
    while picked.len() < min {
        let tag = rng.pick(from);
        if !picked.iter().any(|p| p == tag) {
            picked.push(tag.to_owned());
        }
    }
    picked
}

fn sentence(rng: &mut SplitMix64, words: usize) -> String {
    let mut text = String::new();
    for i in 0..words {
        if i > 0 {
            text.push(' ');
        }
        text.push_str(rng.pick(WORDS));
    }
    text.push('.');
    text
}

/// SplitMix64 (Steele, Lea and Flood): tiny, fast, and good enough to make
/// varied data without a dependency.
struct SplitMix64(u64);

impl SplitMix64 {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number in `0..n`.
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    /// True `percent` times in a hundred.
    fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }

    /// `len` random characters of `[0-9A-Za-z]`, as in payment and image ids.
    fn token(&mut self, len: usize) -> String {
        const ALPHABET: &[u8] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
        (0..len)
            .map(|_| char::from(ALPHABET[self.below(ALPHABET.len() as u64) as usize]))
            .collect()
    }

    /// A random (version 4 style) UUID in its text form.
    fn uuid(&mut self) -> String {
        let (a, b) = (self.next(), self.next());
        format!(
            "{:08x}-{:04x}-4{:03x}-{:04x}-{:012x}",
            a >> 32,
            (a >> 16) & 0xffff,
            a & 0xfff,
            (b >> 48) & 0x3fff | 0x8000,
            b & 0xffff_ffff_ffff
        )
    }

    fn pick<'a>(&mut self, from: &[&'a str]) -> &'a str {
        from[self.below(from.len() as u64) as usize]
    }
}

const FIRST_NAMES: &[&str] = &[
    "Ada", "Grace", "Linus", "Margaret", "Dennis", "Barbara", "Ken", "Frances", "Edsger", "Radia",
];
const LAST_NAMES: &[&str] = &[
    "Lovelace", "Hopper", "Torvalds", "Hamilton", "Ritchie", "Liskov", "Thompson", "Allen",
];
const DOMAINS: &[&str] = &["example.com", "mail.example.org", "corp.example.net"];
const STREETS: &[&str] = &[
    "Maple",
    "Oak",
    "Pine",
    "Cedar",
    "Elm",
    "Washington",
    "Lake",
    "Hill",
    "Sunset",
    "Park",
];
const CITIES: &[&str] = &[
    "Seattle",
    "Portland",
    "Denver",
    "Austin",
    "Chicago",
    "Boston",
    "New York",
    "San Jose",
    "Sacramento",
    "Dallas",
];
const CURRENCIES: &[&str] = &["USD", "EUR", "GBP", "CAD"];
const STATUSES: &[&str] = &[
    "PLACED",
    "PAID",
    "PACKED",
    "SHIPPED",
    "DELIVERED",
    "RETURNED",
    "CANCELLED",
];
const PRODUCTS: &[&str] = &[
    "Coffee Grinder",
    "Trail Shoes",
    "Wool Sweater",
    "Desk Lamp",
    "Water Bottle",
    "Backpack",
    "Headphones",
    "Notebook",
    "Cast Iron Pan",
    "Yoga Mat",
    "Rain Jacket",
    "Phone Case",
];
const ADJECTIVES: &[&str] = &[
    "Classic",
    "Ultralight",
    "Organic",
    "Premium",
    "Compact",
    "Vintage",
    "Everyday",
    "Pro",
];
const CUSTOMER_TAGS: &[&str] = &[
    "vip",
    "wholesale",
    "newsletter",
    "beta",
    "employee",
    "churn-risk",
];
const ORDER_TAGS: &[&str] = &[
    "gift",
    "priority",
    "bulk",
    "subscription",
    "promo",
    "backorder",
];
const WORDS: &[&str] = &[
    "please",
    "leave",
    "the",
    "package",
    "at",
    "back",
    "door",
    "gift",
    "for",
    "my",
    "sister",
    "call",
    "before",
    "delivery",
    "fragile",
    "handle",
    "with",
    "care",
    "customer",
    "requested",
    "refund",
    "replacement",
    "arrived",
    "damaged",
    "box",
    "was",
    "wet",
    "left",
    "with",
    "neighbour",
    "ring",
    "bell",
    "twice",
    "no",
    "invoice",
    "in",
    "parcel",
    "wrong",
    "size",
    "exchange",
    "approved",
    "by",
    "support",
    "agent",
    "ticket",
    "follow",
    "up",
    "next",
    "week",
];
