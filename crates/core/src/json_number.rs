//! A `Decimal` written as a JSON number, for `#[serde(with = "opsd_core::json_number")]`: the same
//! `f64` as `rust_decimal::serde::float`, found faster. rust_decimal's `to_f64` divides its 96-bit
//! mantissa twice in u128 and rounds through a power of ten; a report writes two hundred decimals,
//! and that was most of what writing one cost.
//!
//! Why the shortcut gives the same bits: for a mantissa `m` below 2^50 and a scale `s` from 1 to 22,
//! `m` and `10^s` are exact doubles, so `m / 10^s` is the correctly rounded quotient. rust_decimal
//! adds the integral and fractional parts, multiplies by `10^s` and rounds; that product is within
//! 3·m·2^-53 < 0.5 of `m`, so it rounds back to `m` exactly and its last step is the same division.
//! Other values (larger, scale 0 or above 22) take rust_decimal's own path.

use rust_decimal::Decimal;
use serde::Serializer;

/// Powers of ten that are exact doubles.
const POW10: [f64; 23] = [
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20,
    1e21, 1e22,
];

/// The double rust_decimal's `to_f64` gives for `value`.
pub fn to_f64(value: Decimal) -> f64 {
    let scale = value.scale() as usize;
    let magnitude = value.mantissa().unsigned_abs();
    if (1..POW10.len()).contains(&scale) && magnitude < 1 << 50 {
        let quotient = magnitude as f64 / POW10[scale];
        if value.is_sign_negative() { -quotient } else { quotient }
    } else {
        rust_decimal::prelude::ToPrimitive::to_f64(&value).expect("a Decimal always has an f64")
    }
}

pub fn serialize<S: Serializer>(value: &Decimal, serializer: S) -> Result<S::Ok, S::Error> {
    serializer.serialize_f64(to_f64(*value))
}

/// For `Option<Decimal>`: `null` when none.
pub mod option {
    use rust_decimal::Decimal;
    use serde::Serializer;

    pub fn serialize<S: Serializer>(value: &Option<Decimal>, serializer: S) -> Result<S::Ok, S::Error> {
        match value {
            Some(value) => serializer.serialize_some(&super::to_f64(*value)),
            None => serializer.serialize_none(),
        }
    }
}

#[cfg(test)]
mod tests {
    use rust_decimal::prelude::ToPrimitive;

    use super::*;

    fn assert_same(value: Decimal) {
        let crate_f64 = value.to_f64().unwrap();
        assert_eq!(to_f64(value).to_bits(), crate_f64.to_bits(), "{value:?} (scale {})", value.scale());
    }

    /// A xorshift sequence: the test is the same every run.
    fn numbers() -> impl Iterator<Item = u64> {
        let mut state = 0x9e37_79b9_7f4a_7c15_u64;
        std::iter::from_fn(move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            Some(state)
        })
    }

    #[test]
    fn gives_the_same_bits_as_rust_decimal() {
        let mut random = numbers();
        for _ in 0..400_000 {
            let (bits, scale, sign) = (random.next().unwrap(), random.next().unwrap(), random.next().unwrap());
            // Mantissas of every length up to 2^52, so both sides of the shortcut's bound are hit.
            let magnitude = bits >> (12 + bits % 52);
            let mut value = Decimal::from_i128_with_scale(i128::from(magnitude), (scale % 29) as u32);
            value.set_sign_negative(sign % 2 == 1);
            assert_same(value);
        }
        for magnitude in [0, 1, 9, 10, (1 << 50) - 1, 1 << 50, (1 << 53) + 1, 999_999_999_999_999] {
            for scale in 0..=28 {
                for negative in [false, true] {
                    let mut value = Decimal::from_i128_with_scale(magnitude, scale);
                    value.set_sign_negative(negative);
                    assert_same(value);
                }
            }
        }
        // Every cent up to 100,000.00, and four-decimal fractions.
        for cents in 0..10_000_000 {
            assert_same(Decimal::new(cents, 2));
        }
        for fraction in 0..=100_000 {
            assert_same(Decimal::new(fraction, 4));
        }
        assert_same(Decimal::MAX);
        assert_same(Decimal::MIN);
    }

    #[test]
    fn writes_json_as_rust_decimal_does() {
        #[derive(serde::Serialize)]
        struct Ours(#[serde(with = "super")] Decimal, #[serde(with = "super::option")] Option<Decimal>);
        #[derive(serde::Serialize)]
        struct Crates(
            #[serde(with = "rust_decimal::serde::float")] Decimal,
            #[serde(with = "rust_decimal::serde::float_option")] Option<Decimal>,
        );
        for (value, option) in [
            (Decimal::new(245_050, 2), Some(Decimal::new(-1, 4))),
            (Decimal::new(2300, 0), None),
            (Decimal::new(-0, 3), Some(Decimal::new(123_456_789, 28))),
        ] {
            let ours = serde_json::to_string(&Ours(value, option)).unwrap();
            assert_eq!(ours, serde_json::to_string(&Crates(value, option)).unwrap());
        }
    }
}
