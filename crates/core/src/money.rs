use std::str::FromStr;

use rust_decimal::Decimal;

use crate::FieldError;

/// The largest amount `NUMERIC(12,2)` holds.
/// The largest amount of money accepted.
pub const MONEY_MAX: Decimal = Decimal::from_parts(3_567_587_327, 232, 0, false, 2); // 999_999_999_999 / 10^2

/// An amount of money: finite, at least 0, at most 2 decimals, at most 9,999,999,999.99.
pub type Money = Decimal;

/// Parses a JSON number's text (`12`, `12.5`, `1.25e2`) into money, naming `field` when it breaks a
/// rule.
pub fn parse_money(field: &str, text: &str) -> Result<Money, FieldError> {
    let value = Decimal::from_str(text)
        .or_else(|_| Decimal::from_scientific(text))
        .map_err(|_| FieldError::new(field, "must be a finite number"))?;
    if value.is_sign_negative() && !value.is_zero() {
        return Err(FieldError::new(field, "must be 0 or more"));
    }
    if value.normalize().scale() > 2 {
        return Err(FieldError::new(field, "must have at most 2 decimals"));
    }
    if value > MONEY_MAX {
        return Err(FieldError::new(field, "must be at most 9999999999.99"));
    }
    Ok(value.round_dp(2).normalize())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_amounts_with_up_to_two_decimals() {
        assert_eq!(parse_money("a", "12").unwrap(), Decimal::from(12));
        assert_eq!(parse_money("a", "12.50").unwrap().to_string(), "12.5");
        assert_eq!(parse_money("a", "0").unwrap(), Decimal::ZERO);
        assert_eq!(parse_money("a", "1.25e2").unwrap(), Decimal::from(125));
        assert_eq!(parse_money("a", "9999999999.99").unwrap().to_string(), "9999999999.99");
    }

    #[test]
    fn rejects_negative_too_precise_too_large_and_non_finite_amounts() {
        for bad in ["-0.01", "12.345", "10000000000", "NaN", "inf", "1e999", ""] {
            let error = parse_money("actualSales", bad).unwrap_err();
            assert_eq!(error.field, "actualSales", "{bad}");
        }
    }

    #[test]
    fn the_max_constant_is_what_it_says() {
        assert_eq!(MONEY_MAX, Decimal::from_str("9999999999.99").unwrap());
    }
}
