//! A session's `maxTurns` where the agent has no limit of its own: the protocol counts
//! the agent's model responses in a turn and, past the limit, interrupts the agent and
//! ends the turn with `stopReason: maxTurns`.

use sandbox_universal::StopReason;

/// Counts a turn's model responses against a limit.
#[derive(Debug, Clone, Default)]
pub struct StepLimit {
    max: Option<u32>,
    steps: u32,
    tripped: bool,
}

impl StepLimit {
    /// A limit of `max` model responses per turn (`None`: no limit).
    pub fn new(max: Option<u32>) -> Self {
        Self {
            max,
            ..Self::default()
        }
    }

    /// A turn begins: nothing counted yet.
    pub fn begin(&mut self) {
        self.steps = 0;
        self.tripped = false;
    }

    /// A model response begins. `true` when it is one too many: the caller interrupts
    /// the agent (once; later calls answer `false`) and ends the turn with
    /// [`StepLimit::stop_reason`].
    pub fn step(&mut self) -> bool {
        self.steps += 1;
        let over = self.max.is_some_and(|max| self.steps > max);
        let first = over && !self.tripped;
        self.tripped |= over;
        first
    }

    /// Whether the running turn hit the limit.
    pub fn tripped(&self) -> bool {
        self.tripped
    }

    /// `maxTurns` when the turn hit the limit, else `otherwise` (a turn interrupted for
    /// the limit ends as cancelled in the agent's own words).
    pub fn stop_reason(&self, otherwise: StopReason) -> StopReason {
        if self.tripped {
            StopReason::MaxTurns
        } else {
            otherwise
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trips_once_past_the_limit() {
        let mut limit = StepLimit::new(Some(2));
        limit.begin();
        assert!(!limit.step() && !limit.step());
        assert!(limit.step(), "the third response is one too many");
        assert!(!limit.step(), "the interrupt is asked once");
        assert_eq!(
            limit.stop_reason(StopReason::Cancelled),
            StopReason::MaxTurns
        );
        limit.begin();
        assert!(!limit.step() && !limit.tripped());
        let mut none = StepLimit::new(None);
        assert!((0..100).all(|_| !none.step()));
    }
}
