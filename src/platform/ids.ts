import { createHash, hash, randomBytes, randomFillSync, randomUUID, timingSafeEqual } from "node:crypto";

/**
 * Identifiers in the public style: projects `shiny-wind-028834`, branches `br-…`, endpoints
 * `ep-…`, operations UUIDs. All randomness comes from a RandomSource so seeds can be
 * deterministic; the default source is the CSPRNG.
 */
export interface RandomSource {
  /** `n` uniformly random bytes. */
  bytes(n: number): Buffer;
}

/**
 * The CSPRNG, drawn from a 4 KB pool refilled as it runs out: one getrandom call per few hundred
 * ids instead of one per 4-byte draw (as Node's randomUUID pools its own entropy).
 */
export const cryptoRandom: RandomSource = (() => {
  const POOL = 4096;
  const pool = Buffer.alloc(POOL);
  let used = POOL;
  return {
    bytes(n) {
      if (n > POOL) return randomBytes(n);
      if (used + n > POOL) {
        randomFillSync(pool);
        used = 0;
      }
      const out = Buffer.from(pool.subarray(used, used + n));
      // Bytes handed out are wiped from the pool, so a secret never lingers there.
      pool.fill(0, used, used + n);
      used += n;
      return out;
    },
  };
})();

/** A deterministic source: SHA-256 in counter mode over a seed string (for seeded demo data). */
export function seededRandom(seed: string): RandomSource {
  let counter = 0;
  let pool = Buffer.alloc(0);
  return {
    bytes(n) {
      while (pool.length < n) {
        const block = createHash("sha256").update(`${seed}:${counter++}`).digest();
        pool = Buffer.concat([pool, block]);
      }
      const out = pool.subarray(0, n);
      pool = pool.subarray(n);
      return Buffer.from(out);
    },
  };
}

const ADJECTIVES = [
  "aged",
  "autumn",
  "billowing",
  "bitter",
  "black",
  "blue",
  "bold",
  "broad",
  "calm",
  "cold",
  "cool",
  "crimson",
  "curly",
  "damp",
  "dark",
  "dawn",
  "delicate",
  "divine",
  "dry",
  "empty",
  "falling",
  "fancy",
  "flat",
  "floral",
  "fragrant",
  "frosty",
  "gentle",
  "green",
  "hidden",
  "holy",
  "icy",
  "jolly",
  "late",
  "lingering",
  "little",
  "lively",
  "long",
  "lucky",
  "misty",
  "morning",
  "muddy",
  "mute",
  "nameless",
  "noisy",
  "odd",
  "old",
  "orange",
  "patient",
  "plain",
  "polished",
  "proud",
  "purple",
  "quiet",
  "rapid",
  "raspy",
  "red",
  "restless",
  "rough",
  "round",
  "royal",
  "shiny",
  "shrill",
  "shy",
  "silent",
  "small",
  "snowy",
  "soft",
  "solitary",
  "sparkling",
  "spring",
  "square",
  "steep",
  "still",
  "summer",
  "super",
  "sweet",
  "throbbing",
  "tight",
  "tiny",
  "twilight",
  "wandering",
  "weathered",
  "white",
  "wild",
  "winter",
  "wispy",
  "withered",
  "yellow",
  "young",
];
const NOUNS = [
  "art",
  "band",
  "bar",
  "base",
  "bird",
  "block",
  "boat",
  "bonus",
  "bread",
  "breeze",
  "brook",
  "bush",
  "butterfly",
  "cake",
  "cell",
  "cherry",
  "cloud",
  "credit",
  "darkness",
  "dawn",
  "dew",
  "disk",
  "dream",
  "dust",
  "feather",
  "field",
  "fire",
  "firefly",
  "flower",
  "fog",
  "forest",
  "frog",
  "frost",
  "glade",
  "glitter",
  "grass",
  "hall",
  "hat",
  "haze",
  "heart",
  "hill",
  "king",
  "lab",
  "lake",
  "leaf",
  "limit",
  "math",
  "meadow",
  "mode",
  "moon",
  "morning",
  "mountain",
  "mouse",
  "mud",
  "night",
  "paper",
  "pine",
  "poetry",
  "pond",
  "queen",
  "rain",
  "recipe",
  "resonance",
  "rice",
  "river",
  "salad",
  "scene",
  "sea",
  "shadow",
  "shape",
  "silence",
  "sky",
  "smoke",
  "snow",
  "snowflake",
  "sound",
  "star",
  "sun",
  "sunset",
  "surf",
  "term",
  "thunder",
  "tooth",
  "tree",
  "truth",
  "union",
  "unit",
  "violet",
  "voice",
  "water",
  "waterfall",
  "wave",
  "wildflower",
  "wind",
  "wood",
];
const ALNUM = "abcdefghijklmnopqrstuvwxyz0123456789";

export class IdGenerator {
  constructor(private readonly random: RandomSource = cryptoRandom) {}

  /** Uniform integer in [0, max) by rejection sampling, so no value is favoured. */
  int(max: number): number {
    const limit = Math.floor(0x1_0000_0000 / max) * max;
    for (;;) {
      const v = this.random.bytes(4).readUInt32BE(0);
      if (v < limit) return v % max;
    }
  }

  pick<T>(items: readonly T[]): T {
    return items[this.int(items.length)] as T;
  }

  /** `n` characters of [a-z0-9], uniformly distributed. */
  alnum(n: number): string {
    let out = "";
    while (out.length < n) {
      for (const b of this.random.bytes(n)) {
        // 252 = 7 * 36: bytes at or above it would bias the distribution.
        if (b < 252 && out.length < n) out += ALNUM[b % 36];
      }
    }
    return out;
  }

  digits(n: number): string {
    return String(this.int(10 ** n)).padStart(n, "0");
  }

  words(): string {
    return `${this.pick(ADJECTIVES)}-${this.pick(NOUNS)}`;
  }

  projectId(): string {
    return `${this.words()}-${this.digits(6)}`;
  }
  branchId(): string {
    return `br-${this.words()}-${this.alnum(8)}`;
  }
  snapshotId(): string {
    return `snap-${this.words()}-${this.alnum(8)}`;
  }
  endpointId(): string {
    return `ep-${this.words()}-${this.alnum(8)}`;
  }
  orgId(): string {
    return `org-${this.words()}-${this.digits(8)}`;
  }
  uuid(): string {
    // The CSPRNG's own v4 UUIDs come from a pooled buffer, far cheaper than 16 fresh bytes each.
    if (this.random === cryptoRandom) return randomUUID();
    const b = this.random.bytes(16);
    b[6] = ((b[6] as number) & 0x0f) | 0x40;
    b[8] = ((b[8] as number) & 0x3f) | 0x80;
    const h = b.toString("hex");
    return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
  }
  /** An API key secret: 64 characters of [a-z0-9]. */
  apiKey(): string {
    return this.alnum(64);
  }
  /** A role password in the style Neon shows (letters and digits). */
  password(): string {
    return `npg_${this.alnum(12)}`;
  }
}

/** Compares two secrets in constant time. */
export function sameText(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

export function hashKey(key: string): string {
  return hash("sha256", key, "hex");
}
