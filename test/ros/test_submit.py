"""The submitter's reading of status events (homiebot/ros/submit.py), without a graph."""
from homiebot.ros.submit import _Follower


def _follower(events: list[dict], repeats_only: bool = True) -> tuple[_Follower, list[str], list[str]]:
    out: list[str] = []
    err: list[str] = []
    return _Follower("abc", events, out.append, err.append, repeats_only=repeats_only), out, err


def test_a_duplicate_answering_a_resend_is_not_the_end_when_the_first_accepted_was_lost() -> None:
    """The first send's "accepted" can be published before the task manager matched our subscription; the
    resend is then answered "duplicate". That is proof of receipt, not the submission's end."""
    events = [{"id": "abc", "state": "duplicate", "cause": "invalid", "reason": "received already"}]
    follow, out, err = _follower(events)
    assert follow.heard() and follow.mine() == [] and follow.show_new() is None and not err
    events.append({"id": "abc", "state": "running", "episode": "e1"})
    events.append({"id": "abc", "state": "finished", "episode": "e1", "outcome": {"success": True}})
    final = follow.show_new()
    assert final is not None and final["state"] == "finished" and follow.episode() == "e1"


def test_a_reused_id_chosen_by_the_caller_ends_on_its_duplicate() -> None:
    events = [{"id": "abc", "state": "duplicate", "cause": "invalid", "reason": "a submission with id 'abc' was received already"}]
    follow, out, err = _follower(events, repeats_only=False)
    final = follow.show_new()
    assert final is not None and final["state"] == "duplicate" and err and "received already" in err[0]


def test_other_submissions_events_are_not_ours() -> None:
    follow, _, _ = _follower([{"id": "xyz", "state": "accepted"}])
    assert not follow.heard() and follow.mine() == []
