"""The LLM-backed persona against a chat-completions server on the loopback interface: the facts and
the relevance stay the templated user's, the words are the model's, and any failure falls back to
the templated answer with the reason in the record. No real network is used."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from homiebot.bench.suite import suite_path
from homiebot.config import RunConfig
from homiebot.core.chat_client import ChatClient
from homiebot.core.errors import ConfigError
from homiebot.core.tasks import ObjectAt, Task, load_task
from homiebot.people.factory import make_user
from homiebot.people.llm_persona import LLMPersonaUser, reword_with_llm
from homiebot.people.persona import PersonaUser, load_persona, reword
from homiebot.runtime import run_episode

from ..chat_server import Reply, closed_port, completion, error, fake_server
from .test_people import SCENE

# two things to do; the question below is about the mug only, so the can's place must stay hidden
GOAL = [ObjectAt(object="black_mug", receptacle="white_table"), ObjectAt(object="green_can", receptacle="fridge")]
INSTRUCTION = "put the mug on the white table and put the can away"
QUESTION = "Which mug do you mean?"
REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "config" / "personas" / "ada_ollama.yaml"


def ambiguous(task_id: str = "020_ambiguous") -> Task:
    """One task of the ambiguity suite (the lemon on the brown chair: two questions, a short episode)."""
    return load_task(suite_path("ambiguity") / f"{task_id}.yaml")


@pytest.fixture(autouse=True)
def no_waiting(monkeypatch) -> None:
    monkeypatch.setattr(ChatClient, "_sleep", staticmethod(lambda seconds: None))


@pytest.fixture
def server():
    with fake_server() as fake:
        yield fake


def persona_file(tmp_path: Path, url: str, **llm) -> Path:
    path = tmp_path / "ada_llm.yaml"
    path.write_text("name: ada\nverbosity: chatty\nprecision: precise\npatience: 1\n"
                    "preferences: [likes things put away, asks politely]\n"
                    f"llm: {json.dumps({'model': 'test-model', 'base_url': url, **llm})}\n")
    return path


def users(path: Path, seed: int = 5) -> tuple[LLMPersonaUser, PersonaUser]:
    persona = load_persona(str(path))
    return (LLMPersonaUser(persona, INSTRUCTION, GOAL, SCENE, seed),
            PersonaUser(persona.model_copy(update={"llm": None}), INSTRUCTION, GOAL, SCENE, seed))


def facts_of(body: dict) -> str:
    return re.search(r'The facts of your answer: "(.*)"', body["messages"][1]["content"]).group(1)


def test_the_model_phrases_the_facts_and_sees_only_them(server, tmp_path) -> None:
    server.answer = lambda body: completion("Oh, the black mug, dear, the one sitting on the brown table!")
    llm, templated = users(persona_file(tmp_path, server.url))
    got, plain = llm.answer(QUESTION, 1), templated.answer(QUESTION, 1)
    assert got.answer == "Oh, the black mug, dear, the one sitting on the brown table!"
    assert got.answerer == "persona-llm:ada"
    assert got.relevant is True and got.relevant == plain.relevant

    body = server.requests[0]["body"]
    assert body["model"] == "test-model" and body["seed"] == 5 and body["temperature"] == 0.7
    system, user = body["messages"][0]["content"], body["messages"][1]["content"]
    assert "You are ada" in system and "likes things put away" in system and "talkative" in system and "exact" in system
    assert "first question" in system
    assert facts_of(body) == "I mean the black mug on the brown table." and QUESTION in user
    sent = json.dumps(body).lower()
    assert "fridge" not in sent and "green" not in sent  # the condition nobody asked about stays hidden

    # asked again: irrelevant for both, and the prompt knows the patience has run out
    again, plain_again = llm.answer(QUESTION, 2), templated.answer(QUESTION, 2)
    assert again.relevant is False and plain_again.relevant is False
    assert "already asked you 1 question" in server.requests[1]["body"]["messages"][0]["content"]
    assert "patience has run out" in server.requests[1]["body"]["messages"][0]["content"]


@pytest.mark.parametrize("trouble, reason", [
    ("500", "llm unavailable: HTTP 500: the model crashed"),
    ("timeout", "llm unavailable: timed out after 0.2 s"),
    ("refused", "llm unavailable: cannot reach http://127.0.0.1:"),
    ("empty", "llm unavailable: empty content"),
    ("long", "llm reply not used: 401 characters, more than 400"),
    ("adds", "llm reply not used: added fridge"),
    ("drops", "llm reply not used: left out black, brown"),
])
def test_any_trouble_gives_the_templated_answer_and_says_why(server, tmp_path, trouble, reason) -> None:
    replies = {"500": error(500, "the model crashed"), "timeout": Reply(delay=1.0, body={}), "empty": completion(""),
               "long": completion("the black mug on the brown table " + "x" * 368),
               "adds": completion("The black mug on the brown table, and the fridge too."),
               "drops": completion("That mug, please.")}
    url = f"http://127.0.0.1:{closed_port()}/v1" if trouble == "refused" else server.url
    if trouble != "refused":
        server.rule = lambda body: replies[trouble]
    llm, templated = users(persona_file(tmp_path, url, timeout=0.2, retries=1))
    got, plain = llm.answer(QUESTION, 1), templated.answer(QUESTION, 1)
    assert got.answer == plain.answer and got.relevant == plain.relevant  # the same words as without a model
    assert got.answerer.startswith(f"persona:ada ({reason}"), got.answerer
    if trouble in ("500", "timeout"):
        assert len(server.requests) == 2  # retried once, then given up


def test_an_episode_with_an_llm_persona_records_the_models_answers(server, tmp_path) -> None:
    def rephrase(body: dict) -> Reply:
        return completion("Well, " + facts_of(body)[0].lower() + facts_of(body)[1:])

    server.answer = rephrase
    task = ambiguous()
    cfg = RunConfig.model_validate({"planner": {"name": "heuristic"}, "skill_profile": "perfect",
                                    "world": {"name": "embedded_home", "params": {"width": 64, "height": 64}},
                                    "user": f"persona:{persona_file(tmp_path, server.url)}"})
    record, folder = run_episode(cfg, task, tmp_path / "runs")
    asks = [s.exchange for s in record.steps if s.exchange is not None]
    assert asks and len(server.requests) == len(asks)
    assert all(e.answerer == "persona-llm:ada" and (e.answer or "").startswith("Well, ") for e in asks)
    assert all(e.relevant for e in asks)
    assert record.goal_satisfied and record.ended
    saved = json.loads((folder / "episode.json").read_text())
    assert [s["exchange"]["answer"] for s in saved["steps"] if s.get("exchange")] == [e.answer for e in asks]


def test_an_episode_goes_on_when_the_server_is_down(tmp_path) -> None:
    task = ambiguous()
    cfg = RunConfig.model_validate({"planner": {"name": "heuristic"}, "skill_profile": "perfect",
                                    "world": {"name": "embedded_home", "params": {"width": 64, "height": 64}},
                                    "user": f"persona:{persona_file(tmp_path, f'http://127.0.0.1:{closed_port()}/v1', retries=0)}"})
    record, _ = run_episode(cfg, task)
    asks = [s.exchange for s in record.steps if s.exchange is not None]
    assert asks and all(e.answerer.startswith("persona:ada (llm unavailable: cannot reach") for e in asks)
    assert record.goal_satisfied


@pytest.mark.parametrize("llm, words", [
    ({"base_url": "http://localhost:11434/v1"}, "llm.model: Field required"),
    ({"model": "m", "timeout": -1}, "llm: 'timeout' must be a positive number"),
    ({"model": "m", "base_url": "ftp://x"}, "llm: 'base_url' must start with http://"),
    ({"model": "m", "retries": "many"}, "llm.retries"),
    ({"model": "m", "tempreature": 1}, "llm.tempreature: Extra inputs are not permitted"),
    ({"model": "m", "max_chars": 3}, "llm.max_chars"),
    ({"model": "m", "extra_headers": {"X": 1}}, "llm.extra_headers"),
    ("{model: m, extra_body: {since: 2024-01-01}}", "llm: 'extra_body' must hold JSON values"),  # YAML reads a date
    ("llama3", "llm: Input should be a valid dictionary"),
])
def test_invalid_llm_sections_name_the_field(tmp_path, llm, words) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(f"name: ada\nllm: {llm if isinstance(llm, str) and llm.startswith('{') else json.dumps(llm)}\n")
    with pytest.raises(ConfigError, match=re.escape(words)):
        load_persona(str(path))
    with pytest.raises(ConfigError, match="invalid persona"):
        make_user(f"persona:{path}", Task(id="t", instruction=INSTRUCTION, goal=GOAL), SCENE, 0)


def test_the_example_persona_file_is_valid_and_llm_backed() -> None:
    persona = load_persona(str(EXAMPLE))
    assert persona.llm is not None and persona.llm.base_url == "http://localhost:11434/v1" and persona.llm.api_key_env is None
    task = Task(id="t", instruction=INSTRUCTION, goal=GOAL)
    assert isinstance(make_user(f"persona:{EXAMPLE}", task, SCENE, 0), LLMPersonaUser)
    assert type(make_user("persona:ada", task, SCENE, 0)) is PersonaUser  # built-ins stay templated


def test_rewording_by_the_model_keeps_the_names_or_falls_back(server, tmp_path) -> None:
    persona = load_persona(str(persona_file(tmp_path, server.url)))
    server.answer = lambda body: completion('"Hello! Would you be a dear and put the red mug on the white table?"')
    made = reword_with_llm("put the red mug on the white table", persona, 3, keep=["red mug", "white table"])
    assert made.by_llm and made.text == "Hello! Would you be a dear and put the red mug on the white table?"
    body = server.requests[0]["body"]
    assert body["seed"] == 3 and '"red mug"' in body["messages"][0]["content"] and "You are ada" in body["messages"][0]["content"]

    server.answer = lambda body: completion("Put my mug on the table, would you?")
    lost = reword_with_llm("put the red mug on the white table", persona, 3, keep=["red mug", "white table"])
    assert not lost.by_llm and lost.text == reword("put the red mug on the white table", persona, 3)
    assert lost.reason == "llm reply not used: left out red mug, white table"

    server.rule = lambda body: error(503, "loading")
    down = reword_with_llm("put the red mug on the white table", persona, 3, keep=["red mug"])
    assert not down.by_llm and down.reason.startswith("llm unavailable: HTTP 503")


def test_the_suite_builder_rewords_with_the_model_on_request(server, tmp_path, monkeypatch) -> None:
    from homiebot.builders.suites import people as build_people_suites
    from homiebot.builders.suites.people import named_in, persona_tasks

    originals = [load_task(p) for p in sorted(suite_path("home100").glob("*.yaml"))[:6]]  # a few: the whole suite is slow to load
    monkeypatch.setattr(build_people_suites, "load_suite", lambda name: originals)

    def polite(body: dict) -> Reply:
        request = re.search(r'The request: "(.*)"', body["messages"][1]["content"]).group(1)
        return completion(f"Would you mind doing this for me: {request}")

    server.answer = polite
    persona = load_persona(str(persona_file(tmp_path, server.url)))
    tasks = persona_tasks([persona], llm=True)
    assert len(tasks) == len(originals) == len(server.requests)
    for made, task in zip(tasks, originals):
        assert made.instruction == f"Would you mind doing this for me: {task.instruction}"
        assert made.goal == task.goal and made.split == task.split and made.id == f"{task.id}_ada"
    keep = json.dumps(server.requests[0]["body"]["messages"][0]["content"])
    assert all(name in keep for name in named_in(originals[0].instruction, originals[0].scene))
    assert [t.instruction for t in persona_tasks([persona])] == [reword(t.instruction, persona, i) for i, t in enumerate(originals)]
