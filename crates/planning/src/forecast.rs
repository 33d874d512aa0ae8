//! Sales forecasts per day and block, and their backtest. The baseline is the industry's common
//! one: the mean of the same weekday and block over the previous 4 weeks. The candidates are
//! scored by WAPE (Σ|forecast − actual| ÷ Σ|actual|, safe with closed blocks) on the last 8 weeks,
//! each week forecast only from what came before it; the one that scores best is used, the
//! baseline on a tie, so the chosen method never does worse than the baseline on that history.

use std::collections::BTreeMap;

use opsd_optimization::Block;
use rust_decimal::Decimal;
use time::{Date, Duration};

pub const BLOCKS: [Block; 3] = [Block::Lunch, Block::Dinner, Block::LateNight];
pub const BACKTEST_WEEKS: i64 = 8;

/// Sales by day and block. A block with no row on a day inside the history is a closed block
/// (zero sales).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SalesHistory {
    sales: BTreeMap<(Date, Block), Decimal>,
}

impl SalesHistory {
    pub fn new(rows: impl IntoIterator<Item = (Date, Block, Decimal)>) -> Self {
        let mut sales = BTreeMap::new();
        for (date, block, amount) in rows {
            *sales.entry((date, block)).or_insert(Decimal::ZERO) += amount;
        }
        Self { sales }
    }

    pub fn first_day(&self) -> Option<Date> {
        self.sales.keys().next().map(|(date, _)| *date)
    }

    /// The day's sales in the block, when the history covers the day.
    fn on(&self, date: Date, block: Block) -> Option<Decimal> {
        (self.first_day()? <= date).then(|| self.sales.get(&(date, block)).copied().unwrap_or_default())
    }

    /// The same weekday and block `weeks` weeks back from `date`, 1 being the week before.
    fn weeks_back(&self, date: Date, block: Block, weeks: impl Iterator<Item = i64>) -> Option<Vec<Decimal>> {
        weeks.map(|back| self.on(date - Duration::weeks(back), block)).collect()
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Method {
    /// The mean of the same weekday and block over the previous 4 weeks.
    Baseline,
    /// The previous 4 weeks weighted 4, 3, 2, 1, the latest most.
    RecentWeighted,
    /// Half the recent weighted mean, half the same weekday a year (52 weeks) before, scaled by how
    /// the last 4 weeks compare with the same 4 weeks a year before.
    YearOverYear,
}

impl Method {
    pub const ALL: [Method; 3] = [Method::Baseline, Method::RecentWeighted, Method::YearOverYear];

    pub fn as_str(self) -> &'static str {
        match self {
            Method::Baseline => "same_weekday_mean_4_weeks",
            Method::RecentWeighted => "recent_weighted_4_weeks",
            Method::YearOverYear => "recent_and_last_year_blend",
        }
    }
}

/// The forecast of one day and block, made on `as_of` from the sales before it; None when the
/// history is too short for the method.
pub fn forecast(history: &SalesHistory, method: Method, date: Date, block: Block, as_of: Date) -> Option<Decimal> {
    let lead = ((date - as_of).whole_days().max(0) / 7) + 1;
    let recent = history.weeks_back(date, block, lead..lead + 4)?;
    let weighted = || {
        let weights = [4, 3, 2, 1].map(Decimal::from);
        recent.iter().zip(weights).map(|(sales, weight)| sales * weight).sum::<Decimal>() / Decimal::from(10)
    };
    match method {
        Method::Baseline => Some(recent.iter().sum::<Decimal>() / Decimal::from(4)),
        Method::RecentWeighted => Some(weighted()),
        Method::YearOverYear => {
            let last_year = history.on(date - Duration::weeks(52), block)?;
            let then = history.weeks_back(date - Duration::weeks(52), block, lead..lead + 4)?;
            let (now_sum, then_sum) = (recent.iter().sum::<Decimal>(), then.iter().sum::<Decimal>());
            let scaled = if then_sum.is_zero() { weighted() } else { last_year * now_sum / then_sum };
            Some((weighted() + scaled) / Decimal::TWO)
        }
    }
}

/// Σ|forecast − actual| ÷ Σ|actual|; None when nothing was sold.
pub fn wape(pairs: impl IntoIterator<Item = (Decimal, Decimal)>) -> Option<Decimal> {
    let (error, actual) = pairs
        .into_iter()
        .fold((Decimal::ZERO, Decimal::ZERO), |(error, actual), (f, a)| (error + (f - a).abs(), actual + a.abs()));
    (!actual.is_zero()).then(|| error / actual)
}

/// The method's WAPE over the `BACKTEST_WEEKS` weeks before `week_start`, each week forecast from
/// the sales before it; None when the history is too short for a held-out week.
pub fn backtest(history: &SalesHistory, method: Method, week_start: Date) -> Option<Decimal> {
    let mut pairs = Vec::new();
    for back in 1..=BACKTEST_WEEKS {
        let held_out = week_start - Duration::weeks(back);
        for day in 0..7 {
            let date = held_out + Duration::days(day);
            for block in BLOCKS {
                let predicted = forecast(history, method, date, block, held_out)?;
                pairs.push((predicted, history.on(date, block)?));
            }
        }
    }
    wape(pairs)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Backtest {
    pub method: Method,
    pub weeks: i64,
    pub wape: Decimal,
    pub baseline_wape: Decimal,
}

/// The method to forecast the week of `week_start` with: the best by backtest, the baseline on a
/// tie; None when even the baseline cannot be scored.
pub fn choose_method(history: &SalesHistory, week_start: Date) -> Option<Backtest> {
    let baseline_wape = backtest(history, Method::Baseline, week_start)?;
    let (method, wape) = Method::ALL
        .into_iter()
        .filter_map(|method| backtest(history, method, week_start).map(|wape| (method, wape)))
        .min_by_key(|(method, wape)| (*wape, *method))?;
    Some(Backtest { method, weeks: BACKTEST_WEEKS, wape, baseline_wape })
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;
    use time::macros::date;

    use super::*;

    const WEEK: Date = date!(2026 - 11 - 21);

    fn history(days: i64, sales: impl Fn(i64, Block) -> Decimal) -> SalesHistory {
        SalesHistory::new((1..=days).flat_map(|back| {
            let date = WEEK - Duration::days(back);
            let sales = &sales;
            BLOCKS.map(move |block| (date, block, sales(back, block)))
        }))
    }

    #[test]
    fn under_four_weeks_there_is_no_forecast() {
        let short = history(27, |_, _| Decimal::from(100));
        assert_eq!(forecast(&short, Method::Baseline, WEEK, Block::Dinner, WEEK), None);
        assert_eq!(choose_method(&short, WEEK), None);
    }

    #[test]
    fn a_weekly_pattern_with_a_trend_is_forecast_better_than_the_baseline() {
        // Weekends sell twice as much, and sales grow 1% a week.
        let trend = history(84, |back, block| {
            let date = WEEK - Duration::days(back);
            let weekend = matches!(date.weekday(), time::Weekday::Saturday | time::Weekday::Sunday);
            let base = Decimal::from(if block == Block::LateNight { 100 } else { 1000 });
            let growth = Decimal::ONE - Decimal::new(back / 7, 2);
            base * growth * Decimal::from(if weekend { 2 } else { 1 })
        });
        let chosen = choose_method(&trend, WEEK).unwrap();
        assert!(chosen.wape <= chosen.baseline_wape);
        assert_eq!(chosen.method, Method::RecentWeighted, "{chosen:?}");
    }

    proptest! {
        #[test]
        fn a_constant_history_forecasts_itself(level in 0u32..100_000, method_index in 0usize..3) {
            let flat = history(400, |_, _| Decimal::from(level));
            let method = Method::ALL[method_index];
            for block in BLOCKS {
                prop_assert_eq!(forecast(&flat, method, WEEK + Duration::days(3), block, WEEK), Some(Decimal::from(level)));
            }
        }

        #[test]
        fn a_scaled_history_scales_the_forecast(
            sales in proptest::collection::vec(0u32..10_000, 400 * 3),
            factor in 1u32..20,
            method_index in 0usize..3,
        ) {
            let at = |back: i64, block: Block| Decimal::from(sales[(back as usize - 1) * 3 + block as usize]);
            let one = history(400, at);
            let scaled = history(400, |back, block| at(back, block) * Decimal::from(factor));
            let method = Method::ALL[method_index];
            let (f1, f2) = (
                forecast(&one, method, WEEK, Block::Dinner, WEEK).unwrap(),
                forecast(&scaled, method, WEEK, Block::Dinner, WEEK).unwrap(),
            );
            prop_assert!((f1 * Decimal::from(factor) - f2).abs() < Decimal::new(1, 6), "{} x {} vs {}", f1, factor, f2);
        }

        #[test]
        fn the_chosen_method_never_scores_worse_than_the_baseline(sales in proptest::collection::vec(0u32..5_000, 90 * 3)) {
            let noisy = history(90, |back, block| Decimal::from(sales[(back as usize - 1) * 3 + block as usize]));
            if let Some(chosen) = choose_method(&noisy, WEEK) {
                prop_assert!(chosen.wape <= chosen.baseline_wape);
            }
        }
    }
}
