//! The flights' unit tests: pacing, resting, retries and the clock.

use super::*;
use crate::plan::Get;
use crate::protocol::request::FailureKind;

fn flights() -> Flights<u8> {
    let retry = RetryPolicy {
        max_attempts: 3,
        max_throttled_attempts: 5,
        ..RetryPolicy::default()
    };
    Flights::new(retry, Pace::new(4, 16), StoreClock::new(0), 7)
}

fn get() -> Request {
    Request::Get(Get {
        table: "t".into(),
        key: Item::new(),
        consistent: true,
    })
}

fn failure(code: &str, status: u16) -> Response {
    Response::failure(
        Failure {
            kind: FailureKind::Answered { status },
            code: code.into(),
            message: "no".into(),
            reasons: Vec::new(),
        },
        0,
    )
}

#[test]
fn transient_failures_are_resent_until_attempts_run_out() {
    let mut f = flights();
    let id = f.send(get(), 1, Resend::Transient);
    assert_eq!(f.next_send().unwrap().delay, Duration::ZERO);
    for _ in 0..2 {
        assert!(f.land(id, failure("InternalServerError", 500)).is_none());
        let again = f.next_send().unwrap();
        assert_eq!(again.id, id);
        assert!(again.delay <= Duration::from_millis(50));
    }
    let Some(Settled::Failed(1, failed)) = f.land(id, failure("InternalServerError", 500)) else {
        panic!("settled")
    };
    assert!(matches!(
        failed.error,
        ProtocolError::Request { attempts: 3, .. }
    ));
    assert_eq!(f.open(), 0);
}

#[test]
fn throttling_gets_the_throttled_attempts_and_permanent_errors_none() {
    let mut f = flights();
    let id = f.send(get(), 1, Resend::Transient);
    for _ in 0..4 {
        assert!(f.land(id, failure("ThrottlingException", 400)).is_none());
    }
    assert!(f.land(id, failure("ThrottlingException", 400)).is_some());
    let id = f.send(get(), 2, Resend::Transient);
    assert!(f.land(id, failure("ValidationException", 400)).is_some());
}

fn batch() -> Request {
    batch_get("t", alloc::vec![Item::new()], 10)
}

#[test]
fn a_throttled_batch_rests_out_of_the_pace_and_goes_first_after() {
    let mut f = flights();
    let throttled = f.send(batch(), 1, Resend::Transient);
    let other = f.send(batch(), 2, Resend::Transient);
    while f.next_send().is_some() {}
    assert!(
        f.land(throttled, failure("ThrottlingException", 400))
            .is_none()
    );
    // Resting: not out, not counted, and no request is handed out for it.
    assert_eq!((f.open(), f.batches()), (2, 1));
    assert!(f.next_send().is_none());
    let Step::<()>::Sleep(pause) = f.idle() else {
        panic!("a sleep while it rests")
    };
    assert!(pause > Duration::ZERO && pause <= Duration::from_millis(25));
    f.wake(pause.as_millis() as u64);
    // Rested: its place is kept (the pace halved to 2, one is out), and it
    // takes it before any new batch.
    assert!(!f.room(), "no room for a new batch ahead of it");
    let again = f.next_send().expect("sent again");
    assert_eq!((again.id, again.delay), (throttled, Duration::ZERO));
    assert_eq!(f.batches(), 2);
    // Stopped while resting: dropped, never sent.
    assert!(f.land(other, failure("ThrottlingException", 400)).is_none());
    assert_eq!(f.stop(), [2], "the resting one is dropped, and said so");
    assert_eq!(f.open(), 1, "only the one out is left");
    assert!(matches!(f.idle::<()>(), Step::Wait));
}

#[test]
fn an_unconditional_commit_is_resent_after_throttling_only() {
    let mut f = flights();
    let id = f.send(get(), 1, Resend::Throttled);
    assert!(!f.next_send().unwrap().resendable);
    assert!(f.land(id, failure("ThrottlingException", 400)).is_none());
    let Some(Settled::Failed(_, failed)) = f.land(id, failure("InternalServerError", 500)) else {
        panic!("a 500 is not resent")
    };
    assert!(failed.maybe_applied());
}
