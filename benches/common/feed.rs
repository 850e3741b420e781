//! The benchmark feed (issue 3): a product feed of 50,000 records keyed by `id` (about
//! 10 MB), and versions where 1% of records change a price, 0.2% are removed, 100 are
//! inserted at the top and 2% have their tags reordered. Generated, no downloads; shared by
//! the benches that include it (`#[path = "common/feed.rs"] mod feed;`).

use serde_json::{Value, json};

/// A small xorshift generator: the same feed on every run.
pub struct Rng(pub u64);

impl Rng {
    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n
    }
}

const TAGS: [&str; 8] = ["new", "sale", "eco", "bulk", "gift", "red", "blue", "xl"];

/// One product record.
pub fn record(id: u64, rng: &mut Rng) -> Value {
    let tags: Vec<&str> = TAGS.iter().copied().filter(|_| rng.below(3) == 0).collect();
    json!({
        "id": id,
        "sku": format!("SKU-{id:08}"),
        "name": format!("Product number {id} in the catalogue"),
        "price": (rng.below(100_000) as f64) / 100.0,
        "stock": rng.below(500),
        "tags": tags,
        "dimensions": {"w": rng.below(100), "h": rng.below(100), "d": rng.below(100)},
    })
}

/// The feed's records, version after version.
pub struct Feed {
    pub rng: Rng,
    pub items: Vec<Value>,
    next_id: u64,
}

impl Feed {
    /// Version 0.
    pub fn first() -> Self {
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        let items = (1..=50_000).map(|id| record(id, &mut rng)).collect();
        Self {
            rng,
            items,
            next_id: 50_001,
        }
    }

    /// Changes the records into the next version.
    pub fn advance(&mut self) {
        let (items, rng) = (&mut self.items, &mut self.rng);
        for _ in 0..items.len() / 100 {
            let i = rng.below(items.len() as u64) as usize;
            items[i]["price"] = json!((rng.below(100_000) as f64) / 100.0);
        }
        for _ in 0..items.len() / 500 {
            let i = rng.below(items.len() as u64) as usize;
            items.remove(i);
        }
        for _ in 0..100 {
            items.insert(0, record(self.next_id, rng));
            self.next_id += 1;
        }
        // Reshuffle some tag lists (order only: not a change).
        for _ in 0..items.len() / 50 {
            let i = rng.below(items.len() as u64) as usize;
            if let Some(tags) = items[i]["tags"].as_array_mut() {
                tags.reverse();
            }
        }
    }

    /// The current version as a document.
    pub fn doc(&self) -> Value {
        json!({"vendor": "acme", "items": self.items})
    }
}
