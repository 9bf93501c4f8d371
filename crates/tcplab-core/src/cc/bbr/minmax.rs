//! Linux `lib/win_minmax.c` for BBR's bandwidth filter.

/// One sample of a [`WinMinmax`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct MinmaxSample {
    pub t: u32,
    pub v: u64,
}

/// Linux `lib/win_minmax.c`: the best, 2nd and 3rd best values over a window
/// of `win` time units (here: BBR round trips), in constant space.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct WinMinmax {
    pub s: [MinmaxSample; 3],
}

impl WinMinmax {
    pub fn get(&self) -> u64 {
        self.s[0].v
    }

    pub fn reset(&mut self, t: u32, v: u64) -> u64 {
        self.s = [MinmaxSample { t, v }; 3];
        v
    }

    fn subwin_update(&mut self, win: u32, val: MinmaxSample) -> u64 {
        let dt = val.t.wrapping_sub(self.s[0].t);
        if dt > win {
            // The whole window passed without a new best: promote 2nd and 3rd.
            self.s[0] = self.s[1];
            self.s[1] = self.s[2];
            self.s[2] = val;
            if val.t.wrapping_sub(self.s[0].t) > win {
                self.s[0] = self.s[1];
                self.s[1] = self.s[2];
                self.s[2] = val;
            }
        } else if self.s[1].t == self.s[0].t && dt > win / 4 {
            // A quarter of the window without a new best: 2nd choice from the 2nd quarter.
            self.s[1] = val;
            self.s[2] = val;
        } else if self.s[2].t == self.s[1].t && dt > win / 2 {
            // Half the window: 3rd choice from the last half.
            self.s[2] = val;
        }
        self.s[0].v
    }

    /// `minmax_running_max`.
    pub fn running_max(&mut self, win: u32, t: u32, meas: u64) -> u64 {
        let val = MinmaxSample { t, v: meas };
        if val.v >= self.s[0].v || val.t.wrapping_sub(self.s[2].t) > win {
            return self.reset(t, meas);
        }
        if val.v >= self.s[1].v {
            self.s[1] = val;
            self.s[2] = val;
        } else if val.v >= self.s[2].v {
            self.s[2] = val;
        }
        self.subwin_update(win, val)
    }

    /// `minmax_running_min`.
    pub fn running_min(&mut self, win: u32, t: u32, meas: u64) -> u64 {
        let val = MinmaxSample { t, v: meas };
        if val.v <= self.s[0].v || val.t.wrapping_sub(self.s[2].t) > win {
            return self.reset(t, meas);
        }
        if val.v <= self.s[1].v {
            self.s[1] = val;
            self.s[2] = val;
        } else if val.v <= self.s[2].v {
            self.s[2] = val;
        }
        self.subwin_update(win, val)
    }
}
