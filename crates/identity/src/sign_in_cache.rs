//! Sign-in outcomes remembered between requests. Every change to what decides one (a user's
//! deletion, a membership's removal, role or row, a team's deletion) is announced by the database to
//! every instance, which forgets the user's outcomes at once; the time to live only bounds an
//! announcement that never arrives.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use opsd_core::{TeamMembership, UserId};

use crate::ports::SignInOutcome;

/// The longest an outcome is used, should the announcements stop arriving without the listening
/// connection noticing (a silently dropped network path).
const SIGN_IN_TIME_TO_LIVE: Duration = Duration::from_secs(10);
const CAPACITY: u64 = 10_000;

/// What a sign-in statement was asked: the same question has the same answer until a change is
/// announced.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct Question {
    user: UserId,
    membership: Option<TeamMembership>,
    issued_at: Option<i64>,
}

/// The remembered outcomes. Used only while this instance listens for the announcements, and
/// forgotten entirely whenever it starts listening again (announcements sent while away are lost).
pub struct SignInCache {
    outcomes: moka::sync::Cache<Question, SignInOutcome>,
    /// Bumped by every forgetting, so an outcome read from the database before a change was
    /// announced is never remembered after it.
    generation: AtomicU64,
    listening: AtomicBool,
}

impl Default for SignInCache {
    fn default() -> Self {
        Self::new(SIGN_IN_TIME_TO_LIVE)
    }
}

/// A question asked of the cache, to remember its answer from the database under the generation
/// it was asked in.
pub struct Lookup {
    question: Question,
    generation: u64,
}

impl SignInCache {
    pub fn new(time_to_live: Duration) -> Self {
        Self {
            outcomes: moka::sync::Cache::builder()
                .max_capacity(CAPACITY)
                .time_to_live(time_to_live)
                .support_invalidation_closures()
                .build(),
            generation: AtomicU64::new(0),
            listening: AtomicBool::new(false),
        }
    }

    /// The remembered outcome, or the lookup to remember the database's answer with.
    pub(crate) fn get(
        &self,
        user: &UserId,
        membership: Option<&TeamMembership>,
        issued_at: Option<i64>,
    ) -> Result<SignInOutcome, Lookup> {
        let generation = self.generation.load(Ordering::SeqCst);
        let question = Question { user: user.clone(), membership: membership.cloned(), issued_at };
        if self.listening.load(Ordering::SeqCst)
            && let Some(outcome) = self.outcomes.get(&question)
        {
            return Ok(outcome);
        }
        Err(Lookup { question, generation })
    }

    /// Remembers the database's answer, unless something was forgotten since the lookup began (the
    /// answer may predate the change) or this instance is not listening.
    pub(crate) fn remember(&self, lookup: Lookup, outcome: SignInOutcome) {
        if !self.listening.load(Ordering::SeqCst) || self.generation.load(Ordering::SeqCst) != lookup.generation {
            return;
        }
        self.outcomes.insert(lookup.question.clone(), outcome);
        // A forgetting that bumped the generation between the check and the insert may have
        // cleared before the insert landed: take it back.
        if self.generation.load(Ordering::SeqCst) != lookup.generation {
            self.outcomes.invalidate(&lookup.question);
        }
    }

    /// Forgets every outcome of `user`.
    pub fn forget(&self, user: &UserId) {
        self.generation.fetch_add(1, Ordering::SeqCst);
        let user = user.clone();
        // Fails only without support for closures, which `new` enables.
        if self.outcomes.invalidate_entries_if(move |question, _| question.user == user).is_err() {
            self.outcomes.invalidate_all();
        }
    }

    pub fn forget_all(&self) {
        self.generation.fetch_add(1, Ordering::SeqCst);
        self.outcomes.invalidate_all();
    }

    /// Called by the announcements' listener: `true` once it listens (after forgetting everything,
    /// since announcements may have been missed), `false` when its connection ends.
    pub fn set_listening(&self, listening: bool) {
        if listening {
            self.forget_all();
            self.listening.store(true, Ordering::SeqCst);
        } else {
            self.listening.store(false, Ordering::SeqCst);
            self.forget_all();
        }
    }
}

#[cfg(test)]
mod tests {
    use opsd_core::{Role, TeamId};

    use super::*;

    fn member() -> TeamMembership {
        TeamMembership { team_id: TeamId::new("org_1"), role: Role::Member }
    }

    fn listening() -> SignInCache {
        let cache = SignInCache::default();
        cache.set_listening(true);
        cache
    }

    fn ask(cache: &SignInCache, user: &str) -> Result<SignInOutcome, Lookup> {
        cache.get(&UserId::new(user), Some(&member()), Some(100))
    }

    #[test]
    fn an_answer_is_remembered_for_the_same_question_only() {
        let cache = listening();
        let lookup = ask(&cache, "user_1").unwrap_err();
        cache.remember(lookup, SignInOutcome::Active);
        assert_eq!(ask(&cache, "user_1").ok(), Some(SignInOutcome::Active));
        assert!(cache.get(&UserId::new("user_1"), Some(&member()), Some(101)).is_err(), "another iat");
        let admin = TeamMembership { role: Role::Admin, ..member() };
        assert!(cache.get(&UserId::new("user_1"), Some(&admin), Some(100)).is_err(), "another role");
        assert!(ask(&cache, "user_2").is_err(), "another user");
    }

    #[test]
    fn forgetting_a_user_keeps_the_others() {
        let cache = listening();
        for user in ["user_1", "user_2"] {
            let lookup = ask(&cache, user).unwrap_err();
            cache.remember(lookup, SignInOutcome::Active);
        }
        cache.forget(&UserId::new("user_1"));
        assert!(ask(&cache, "user_1").is_err());
        assert_eq!(ask(&cache, "user_2").ok(), Some(SignInOutcome::Active));
    }

    #[test]
    fn an_answer_read_before_a_forgetting_is_not_remembered() {
        let cache = listening();
        let lookup = ask(&cache, "user_1").unwrap_err();
        cache.forget(&UserId::new("user_9"));
        cache.remember(lookup, SignInOutcome::Active);
        assert!(ask(&cache, "user_1").is_err());
    }

    #[test]
    fn nothing_is_used_or_remembered_while_not_listening() {
        let cache = listening();
        let lookup = ask(&cache, "user_1").unwrap_err();
        cache.remember(lookup, SignInOutcome::Active);
        cache.set_listening(false);
        assert!(ask(&cache, "user_1").is_err(), "used while not listening");
        let lookup = ask(&cache, "user_1").unwrap_err();
        cache.remember(lookup, SignInOutcome::Active);
        cache.set_listening(true);
        assert!(ask(&cache, "user_1").is_err(), "remembered while not listening, or kept across reconnecting");
    }

    #[test]
    fn an_answer_lives_no_longer_than_its_time_to_live() {
        let cache = SignInCache::new(Duration::from_millis(50));
        cache.set_listening(true);
        let lookup = ask(&cache, "user_1").unwrap_err();
        cache.remember(lookup, SignInOutcome::Active);
        std::thread::sleep(Duration::from_millis(120));
        assert!(ask(&cache, "user_1").is_err());
    }
}
