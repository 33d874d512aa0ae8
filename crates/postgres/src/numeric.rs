//! A faster reading of PostgreSQL's binary `numeric` for report rows. rust_decimal's own reading
//! collects the digits into two vectors and adds each fractional group by a 96-bit division: it was
//! a tenth of an uncached report's server time (about 150 sums a report). A value that fits a
//! `Decimal` exactly is read here by integer arithmetic; any other (more than 28 digits, a scale
//! over 28, NaN or infinity) goes to rust_decimal's reading, which rounds or refuses it as before.

use diesel::deserialize::{self, FromSql};
use diesel::pg::{Pg, PgValue};
use diesel::sql_types::Numeric;
use opsd_core::Decimal;

/// A `numeric` read as a [`Decimal`] of the value's own scale (`FromSql` only: use it in rows).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct PgDecimal(pub Decimal);

impl FromSql<Numeric, Pg> for PgDecimal {
    fn from_sql(value: PgValue<'_>) -> deserialize::Result<Self> {
        match exact(value.as_bytes()) {
            Some(decimal) => Ok(Self(decimal)),
            None => <Decimal as FromSql<Numeric, Pg>>::from_sql(value).map(Self),
        }
    }
}

const POSITIVE: u16 = 0x0000;
const NEGATIVE: u16 = 0x4000;
/// Base-10,000 digits a `u128` holds with room for the scale's shift (7 groups: 28 digits).
const MAX_GROUPS: usize = 7;
/// A `Decimal`'s mantissa is 96 bits.
const MANTISSA_LIMIT: u128 = 1 << 96;

/// The wire form: digit count, weight (the first group's power of 10,000), sign, display scale,
/// then the groups. `None` when the value is not a finite number that fits a `Decimal` exactly.
fn exact(bytes: &[u8]) -> Option<Decimal> {
    let word = |at: usize| bytes.get(at..at + 2).map(|b| u16::from_be_bytes([b[0], b[1]]));
    let groups = usize::from(word(0)?);
    let weight = i32::from(word(2)?.cast_signed());
    let sign = word(4)?;
    let scale = u32::from(word(6)?);
    if groups > MAX_GROUPS || scale > Decimal::MAX_SCALE || !(sign == POSITIVE || sign == NEGATIVE) {
        return None;
    }
    if bytes.len() != 8 + 2 * groups {
        return None;
    }
    let mut mantissa: u128 = 0;
    for at in (8..bytes.len()).step_by(2) {
        let group = word(at)?;
        if group >= 10_000 {
            return None;
        }
        mantissa = mantissa * 10_000 + u128::from(group);
    }
    // The groups read as an integer are the value times 10^(4 × (groups − weight − 1)); the
    // mantissa wanted is the value times 10^scale.
    let shift = 4 * (weight + 1 - i32::try_from(groups).ok()?) + i32::try_from(scale).ok()?;
    if shift >= 0 {
        mantissa = mantissa.checked_mul(10_u128.checked_pow(shift.unsigned_abs())?)?;
    } else {
        let divisor = 10_u128.checked_pow(shift.unsigned_abs())?;
        if !mantissa.is_multiple_of(divisor) {
            return None;
        }
        mantissa /= divisor;
    }
    if mantissa >= MANTISSA_LIMIT {
        return None;
    }
    let mut decimal = Decimal::from_i128_with_scale(i128::try_from(mantissa).ok()?, scale);
    decimal.set_sign_negative(sign == NEGATIVE);
    Some(decimal)
}

#[cfg(test)]
mod tests {
    use super::*;
    use diesel::QueryableByName;
    use diesel::sql_types::Text;
    use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};
    use opsd_test_db::TestDatabase;

    #[derive(QueryableByName)]
    struct Both {
        #[diesel(sql_type = Text)]
        text: String,
        #[diesel(sql_type = Numeric)]
        fast: PgDecimal,
        #[diesel(sql_type = Numeric)]
        crate_reading: Decimal,
    }

    /// Every value PostgreSQL sends reads the same, scale included, as rust_decimal reads it: fixed
    /// edge cases (zero, trailing zero groups, a first group of less than four digits, the limits
    /// of the fast path and past them) and 20,000 random values of every scale from 0 to 30.
    #[tokio::test(flavor = "multi_thread")]
    async fn reads_every_value_as_rust_decimal_does() {
        let database = TestDatabase::new().await;
        let mut conn = AsyncPgConnection::establish(database.url()).await.unwrap();
        let rows: Vec<Both> = diesel::sql_query(
            "WITH v(n) AS ( \
               SELECT unnest(ARRAY['0', '0.00', '-0.5', '1', '-1', '10000', '10000.0000', '0.0001', '-0.00010', \
                 '1234.5', '99999999.99', '12345678901234567890.12345678', '79228162514264337593543950335', \
                 '-79228162514264337593543950335', '0.0000000000000000000000000001', \
                 '0.00000000000000000000000000001', '1e20', '1.000000000000000000000000000000', \
                 '123456789012345678901234567.8', '3.14159265358979323846264338327950']::numeric[]) \
               UNION ALL \
               SELECT round(((random() - 0.5) * 10 ^ (random() * 20))::numeric, (s % 31)::int) \
               FROM generate_series(1, 20000) s) \
             SELECT n::text AS text, n AS fast, n AS crate_reading FROM v",
        )
        .load(&mut conn)
        .await
        .unwrap();
        assert_eq!(rows.len(), 20_020);
        for row in rows {
            assert_eq!(row.fast.0.to_string(), row.crate_reading.to_string(), "{}", row.text);
            assert_eq!(row.fast.0.scale(), row.crate_reading.scale(), "{}", row.text);
        }
    }

    #[test]
    fn leaves_what_does_not_fit_exactly_to_rust_decimal() {
        let header = |groups: u16, weight: i16, sign: u16, scale: u16| {
            [groups.to_be_bytes(), weight.to_be_bytes(), sign.to_be_bytes(), scale.to_be_bytes()].concat()
        };
        assert_eq!(exact(&header(0, 0, 0xC000, 0)), None, "NaN");
        assert_eq!(exact(&header(0, 0, 0xD000, 0)), None, "infinity");
        assert_eq!(exact(&header(1, 0, 0, 0)), None, "a digit missing");
        assert_eq!(exact(&[header(1, 0, 0, 0), 10_000_u16.to_be_bytes().to_vec()].concat()), None, "a group over 9999");
        assert_eq!(exact(&[header(1, 0, 0, 29), 1_u16.to_be_bytes().to_vec()].concat()), None, "scale 29");
        assert_eq!(exact(&[header(1, 8, 0, 0), 1_u16.to_be_bytes().to_vec()].concat()), None, "10^32");
        assert_eq!(
            exact(&[header(1, -1, 0, 2), 1234_u16.to_be_bytes().to_vec()].concat()),
            None,
            "0.1234 at scale 2 is not exact"
        );
        assert_eq!(
            exact(&[header(2, 0, NEGATIVE, 1), [0, 12, 0x13, 0x88].to_vec()].concat()),
            Some(Decimal::new(-125, 1))
        );
    }
}
