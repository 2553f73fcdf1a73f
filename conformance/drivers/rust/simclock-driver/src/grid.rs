//! Exact firing grids for periodic and rate entries (C-PER-1, C-PER-3, C-X-RATE).
//!
//! Helpers a clock may use; the kit itself never computes a clock's times.

use crate::ClockError;

const NS_PER_S: u128 = 1_000_000_000;

/// `phase + k*period` (C-PER-1): the grid of a periodic entry, exact in 128 bits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PeriodGrid {
    /// The time of firing 0.
    pub phase: u128,
    /// The step between firings, > 0.
    pub period: u128,
}

impl PeriodGrid {
    /// The grid, or `ValueError` for a zero period.
    pub fn new(period_ns: u64, phase_ns: u64) -> Result<PeriodGrid, ClockError> {
        if period_ns == 0 {
            return Err(ClockError::value("period_ns must be > 0 ns, got 0"));
        }
        Ok(PeriodGrid { phase: phase_ns.into(), period: period_ns.into() })
    }

    /// The time of firing `k`.
    pub fn time(&self, k: u128) -> u128 {
        self.phase + k * self.period
    }

    /// The first `k` whose time is at or after `now` (C-PER-1).
    pub fn first_index(&self, now: u64) -> u128 {
        let now = u128::from(now);
        if self.phase >= now {
            0
        } else {
            (now - self.phase).div_ceil(self.period)
        }
    }
}

/// `phase + ceil(k * 10**9 * DEN / NUM)` (C-X-RATE): the grid of a `NUM/DEN` Hz entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RateGrid {
    /// The time of firing 0.
    pub phase: u128,
    num: u128,
    /// `10**9 * DEN = c*NUM + d`: split so that no product overflows 128 bits.
    p: u128,
    c: u128,
    d: u128,
}

impl RateGrid {
    /// The grid of `num/den` Hz, or `ValueError` for a zero part or a rate above 1 GHz.
    pub fn new(num: u64, den: u64, phase_ns: u64) -> Result<RateGrid, ClockError> {
        if den == 0 {
            return Err(ClockError::value("rate_hz denominator must be > 0, got 0"));
        }
        if num == 0 {
            return Err(ClockError::value(format!("rate_hz must be > 0 Hz, got 0/{den}")));
        }
        let (num, p) = (u128::from(num), NS_PER_S * u128::from(den));
        if num > p {
            return Err(ClockError::value(format!(
                "rate_hz must be <= 1e9 (one firing per ns at most), got {num}/{den}"
            )));
        }
        Ok(RateGrid { phase: phase_ns.into(), num, p, c: p / num, d: p % num })
    }

    /// `ceil(k * 10**9 * DEN / NUM)`, exact; `None` beyond 128 bits.
    ///
    /// With `k = a*NUM + b` and `10**9*DEN = c*NUM + d`:
    /// `k*10**9*DEN = NUM*(a*10**9*DEN + b*c) + b*d`, and `b*d < NUM**2 < 2**128`.
    pub fn offset(&self, k: u128) -> Option<u128> {
        let (a, b) = (k / self.num, k % self.num);
        let bd = b * self.d;
        a.checked_mul(self.p)?
            .checked_add(b * self.c)?
            .checked_add(bd / self.num + u128::from(bd % self.num != 0))
    }

    /// The time of firing `k`; `None` beyond 128 bits (such a firing is never due).
    pub fn time(&self, k: u128) -> Option<u128> {
        self.phase.checked_add(self.offset(k)?)
    }

    /// The first `k` whose time is at or after `now` (C-PER-1 on the rate grid).
    pub fn first_index(&self, now: u64) -> u128 {
        let now = u128::from(now);
        if self.phase >= now {
            return 0;
        }
        let elapsed = now - self.phase; // < 2**64, so elapsed*num < 2**128
        let mut k = elapsed * self.num / self.p;
        while self.offset(k).is_some_and(|t| t < elapsed) {
            k += 1;
        }
        while k > 0 && self.offset(k - 1).is_some_and(|t| t >= elapsed) {
            k -= 1;
        }
        k
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn c_x_rate_30_hz_is_ceil_of_k_billion_over_30() {
        let g = RateGrid::new(30, 1, 0).unwrap();
        let times: Vec<u128> = (0..4).map(|k| g.time(k).unwrap()).collect();
        assert_eq!(times, [0, 33_333_334, 66_666_667, 100_000_000]);
        assert_eq!(g.time(30), Some(1_000_000_000));
        assert_eq!(g.first_index(1), 1);
        assert_eq!(g.first_index(33_333_334), 1);
        assert_eq!(g.first_index(33_333_335), 2);
    }

    #[test]
    fn c_x_rate_is_exact_where_the_product_passes_128_bits() {
        // k * 10**9 * DEN is about 2**64 * 2**30 * 2**63 here: far past 128 bits.
        let (num, den) = (u64::MAX, u64::MAX / 2);
        let g = RateGrid::new(num, den, 0).unwrap();
        let k = u128::from(u64::MAX) * 3;
        let exact = |k: u128| {
            // Long multiplication in base 2**64 limbs, then long division by num.
            let p = 1_000_000_000u128 * u128::from(den);
            let (k0, k1) = (k as u64 as u128, k >> 64);
            let (p0, p1) = (p as u64 as u128, p >> 64);
            let mut limbs = [0u128; 4];
            for (i, x) in [k0, k1].iter().enumerate() {
                for (j, y) in [p0, p1].iter().enumerate() {
                    let mut carry = x * y;
                    let mut at = i + j;
                    while carry != 0 {
                        let t = limbs[at] + (carry as u64 as u128);
                        limbs[at] = t as u64 as u128;
                        carry = (carry >> 64) + (t >> 64);
                        at += 1;
                    }
                }
            }
            let (mut rem, mut q) = (0u128, [0u128; 4]);
            for i in (0..4).rev() {
                let cur = (rem << 64) | limbs[i];
                q[i] = cur / u128::from(num);
                rem = cur % u128::from(num);
            }
            assert_eq!((q[2], q[3]), (0, 0));
            ((q[1] << 64) | q[0]) + u128::from(rem != 0)
        };
        for kk in [0, 1, 2, k, k + 1, u128::from(u64::MAX) + 12345] {
            assert_eq!(g.offset(kk), Some(exact(kk)), "k = {kk}");
        }
    }

    #[test]
    fn c_x_rate_refuses_zero_parts_and_more_than_a_ghz() {
        for (num, den) in [(0, 1), (1, 0), (1_000_000_001, 1)] {
            let err = RateGrid::new(num, den, 0).unwrap_err();
            assert_eq!(err.kind, crate::ErrorKind::ValueError);
        }
        assert!(RateGrid::new(1_000_000_000, 1, 0).is_ok());
    }

    #[test]
    fn c_per_1_first_index_is_the_first_grid_point_at_or_after_now() {
        let g = PeriodGrid::new(10, 3).unwrap();
        assert_eq!(g.first_index(0), 0);
        assert_eq!(g.first_index(3), 0);
        assert_eq!(g.first_index(4), 1);
        assert_eq!(g.first_index(13), 1);
        assert_eq!(g.time(g.first_index(u64::MAX)), 18446744073709551623);
        assert_eq!(PeriodGrid::new(0, 0).unwrap_err().kind, crate::ErrorKind::ValueError);
    }
}
