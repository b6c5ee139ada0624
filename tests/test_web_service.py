"""The web table as a service: the deal stays the server's secret, every bad input is a short 4xx, safe
defaults (Host names, headers, no API docs, honest bot labels), fair capacity, games in SQLite that
survive kill -9 and a restart, people's games exported as teacher data that train.py distills, and
play.py's command line failing in one line."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import numpy as np
import pytest
from fastapi.testclient import TestClient

from conftest import api_turn, without_shipped_agent
from euchre_lab import play
from euchre_play.store import FINISHED, GameStore
from euchre_play.web import SEED_REFUSED, Games, create_app, offered_bots

ROOT = Path(__file__).resolve().parents[1]
SERVER_START_SECONDS = 300  # a cold start compiles the rules kernels


def _client(app) -> TestClient:
    return TestClient(app, base_url="http://localhost")


def _play_to_end(client, message: dict, rng: np.random.Generator, stop_at: int | None = None) -> dict:
    """Play the person's seat with random legal choices until the game is over (or at version `stop_at`)."""
    while not message["over"] and (stop_at is None or message["version"] < stop_at):
        message = api_turn(client, message, rng)
    return message


# ------------------------------------------------------------------ 1. the deal is the server's secret


def test_a_client_may_not_choose_the_deal_unless_the_server_allows_it():
    with _client(create_app(bots=("random", "random"))) as client:
        refused = client.post("/api/games", json={"seed": 1})
        assert refused.status_code == 403 and refused.json()["detail"] == SEED_REFUSED
        assert client.post("/api/games", json={}).status_code == 200
    with _client(create_app(bots=("random", "random"), allow_client_seeds=True)) as client:
        a, b = (client.post("/api/games", json={"seed": 1}).json() for _ in range(2))
        assert a["hand"] == b["hand"]


# ------------------------------------------------------------------ 2. every bad input a short 4xx


@pytest.fixture(scope="module")
def service():
    app = create_app(bots=("random", "random"), allow_client_seeds=True)
    with _client(app) as client:
        game = client.post("/api/games", json={}).json()
        yield client, game


@pytest.mark.parametrize("field", ["seat", "seed", "version"])
@pytest.mark.parametrize("number", ["NaN", "Infinity", "-Infinity", "1e400", "\"1\"", "true", "1.5"])
def test_non_finite_numbers_and_wrong_types_get_a_4xx(service, field, number):
    client, game = service
    path = f"/api/games/{game['id']}/step" if field == "version" else "/api/games"
    response = client.post(path, content=f'{{"{field}": {number}}}', headers={"content-type": "application/json"})
    assert response.status_code == 422, response.text
    assert field in response.json()["detail"] and len(response.text) < 300


def test_a_huge_body_gets_413_and_a_long_input_is_never_echoed(service):
    client, game = service
    huge = client.post(f"/api/games/{game['id']}/action", json={"action": "x" * 10_000_000, "version": 0})
    assert huge.status_code == 413 and len(huge.text) < 200
    many_keys = client.post("/api/games", json={"rules": {f"rule{i}": 1 for i in range(200_000)}})
    assert many_keys.status_code == 413
    long = client.post(f"/api/games/{game['id']}/action", json={"action": "x" * 30_000, "version": game["version"]})
    assert long.status_code == 422 and len(long.text) < 300
    unknown = client.post("/api/games", json={"rules": {f"rule{i}_{'y' * 100}": 1 for i in range(60)}})
    assert unknown.status_code == 400 and len(unknown.json()["detail"]) <= 200
    spec = client.post("/api/games", json={"partner": "z" * 150})
    assert spec.status_code == 400 and len(spec.json()["detail"]) <= 200
    assert client.post("/api/games", content=b"{not json", headers={"content-type": "application/json"}).status_code == 422


# ------------------------------------------------------------------ 3. safe defaults


def test_only_the_host_names_it_was_started_for_are_served():
    app = create_app(bots=("random", "random"))
    with TestClient(app, base_url="http://evil.example") as client:
        assert client.get("/api/options").status_code == 400
    for name in ("localhost", "127.0.0.1", "localhost:8000", "[::1]:8000"):
        with TestClient(app, base_url=f"http://{name}") as client:
            assert client.get("/api/options").status_code == 200, name
    with TestClient(create_app(hosts={"table.example"}), base_url="http://table.example") as client:
        assert client.get("/api/options").status_code == 200


def test_api_docs_are_off_unless_asked_for_and_every_response_has_the_security_headers():
    with _client(create_app()) as client:
        assert client.get("/docs").status_code == 404 and client.get("/openapi.json").status_code == 404
        for response in (client.get("/"), client.get("/api/options"), client.get("/api/games/nope"), client.get("/static/app.js")):
            assert "frame-ancestors 'none'" in response.headers["content-security-policy"]
            assert response.headers["x-frame-options"] == "DENY"
            assert response.headers["x-content-type-options"] == "nosniff"
    with _client(create_app(api_docs=True)) as client:
        assert client.get("/docs").status_code == 200 and client.get("/openapi.json").status_code == 200


def test_bots_are_offered_strongest_first_with_no_path_and_a_checkpoint_with_its_rules():
    with _client(create_app(bots=("ppo", "heuristic"))) as client:
        options = client.get("/api/options").json()
        bots = {b["spec"]: b for b in options["bots"]}
        assert list(bots)[:5] == ["ppo", "pimc", "heuristic", "easy", "random"]
        assert "strongest fair bot" in bots["ppo"]["label"] and "strongest fair" not in bots["pimc"]["label"]
        assert bots["ppo"]["rules"] is None and bots["heuristic"]["rules"] is None  # the bare ppo: each table's own agent
        game = client.post("/api/games", json={"opponents": "ppo"}).json()
        text = json.dumps(game)
        assert str(ROOT) not in text and ".pt" not in text
        assert game["seats"][1]["player"] == "Expert"  # the level the shipped network plays
    checkpoint = f"ppo:{ROOT / 'checkpoints' / 'euchre_ppo.pt'}"
    assert offered_bots((checkpoint, "heuristic"))[checkpoint]["rules"]["deck"] == 24  # a checkpoint: the rules it plays


def test_levels_are_offered_by_name_and_one_that_cannot_play_the_table_says_why(monkeypatch, tmp_path):
    without_shipped_agent(monkeypatch, tmp_path, "joker32")
    with _client(create_app()) as client:
        options = client.get("/api/options").json()
        levels = {level["id"]: level for level in options["levels"]}
        assert [level["name"] for level in options["levels"]] == ["Easy", "Medium", "Hard", "Expert"]
        assert all(level["available"] for level in levels.values())  # the shipped network plays the default table
        assert options["defaults"]["partner"] == "medium" and {t["name"] for t in options["tables"]} >= {"standard", "joker32"}
        assert all(rule["title"] and rule["about"] for rule in options["rules"])
        joker = client.post("/api/levels", json={"rules": {"deck": 32, "joker": True}}).json()["levels"]
        assert [level["available"] for level in joker] == [True, True, True, False]
        assert joker[3]["why"] == "Expert can't play this table: no computer player has learned this table yet"
        refused = client.post("/api/games", json={"opponents": "expert", "rules": {"deck": 32, "joker": True}})
        assert refused.status_code == 400 and refused.json()["detail"] == joker[3]["why"]
        assert client.app.state.games.sessions == {}
        other_deck = client.post("/api/levels", json={"rules": {"deck": 32}}).json()["levels"]
        assert all(level["available"] for level in other_deck)   # the standard agent, carried to the deck
        bad = client.post("/api/levels", json={"rules": {"deck": 31}})
        assert bad.status_code == 400 and "Rules.deck=31" in bad.json()["detail"]
        game = client.post("/api/games", json={"partner": "easy", "opponents": "hard", "seat": 0}).json()
        assert [seat["player"] for seat in game["seats"]] == ["you", "Hard", "Easy", "Hard"]


def test_oracle_is_marked_as_cheating_wherever_it_shows():
    with _client(create_app()) as client:
        bots = {b["spec"]: b for b in client.get("/api/options").json()["bots"]}
        assert not bots["oracle"]["fair"] and "CHEATS" in bots["oracle"]["label"]
        game = client.post("/api/games", json={"opponents": "oracle"}).json()
        assert "CHEATS" in game["seats"][1]["player"]


# ------------------------------------------------------------------ 4. fair capacity


def test_one_client_may_hold_only_its_share_of_live_games():
    with _client(create_app(bots=("random", "random"), games=Games(per_client=2))) as client:
        for _ in range(2):
            client.post("/api/games", json={}).raise_for_status()
        third = client.post("/api/games", json={})
        assert third.status_code == 429 and "games in progress" in third.json()["detail"]


def test_a_new_game_at_the_cap_replaces_the_clients_unfinished_game_and_a_refused_one_keeps_it():
    games = Games(per_client=1)
    with _client(create_app(bots=("random", "random"), games=games)) as client:
        old = client.post("/api/games", json={}).json()["id"]
        assert client.post("/api/games", json={}).status_code == 429
        bad = client.post("/api/games", json={"replaces": old, "rules": {"deck": 31}})
        assert bad.status_code == 400 and old in games.sessions  # refused: the old game plays on
        new = client.post("/api/games", json={"replaces": old})
        assert new.status_code == 200 and set(games.sessions) == {new.json()["id"]}
        assert client.get(f"/api/games/{old}").status_code == 404 and games.store.game(old).status == "dropped"
        assert client.delete(f"/api/games/{new.json()['id']}").status_code == 204  # leaving frees the slot
        client.post("/api/games", json={}).raise_for_status()


def test_games_are_swept_by_the_timer_not_by_each_request():
    games = Games(idle_seconds=0)
    with _client(create_app(bots=("random", "random"), games=games, sweep_seconds=3600)) as client:
        game = client.post("/api/games", json={}).json()
        time.sleep(0.01)
        assert client.get(f"/api/games/{game['id']}").status_code == 200  # a request sweeps nothing
    games = Games(idle_seconds=0)
    with _client(create_app(bots=("random", "random"), games=games, sweep_seconds=0.05)) as client:
        game = client.post("/api/games", json={}).json()
        deadline = time.monotonic() + 10
        while games.sessions and time.monotonic() < deadline:
            time.sleep(0.05)
        assert games.sessions == {}
        assert client.get(f"/api/games/{game['id']}").status_code == 404
        assert games.store.game(game["id"]).status == "abandoned"


def test_every_ppo_game_shares_one_network_with_its_own_dice():
    app = create_app(bots=("ppo", "ppo"))
    with _client(app) as client:
        ids = [client.post("/api/games", json={}).json()["id"] for _ in range(3)]
        bots = [bot for i in ids for bot in app.state.games.sessions[i].table.bots.values()]
    assert len(bots) == 9 and len({id(b.net) for b in bots}) == 1
    assert len({id(b.rng) for b in bots}) == 9


# ------------------------------------------------------------------ 5. games in SQLite


def test_a_finished_game_is_kept_with_every_decision(tmp_path):
    store = GameStore(tmp_path / "games.sqlite3")
    assert store.journal_mode() == "wal"
    with _client(create_app(bots=("random", "random"), games=Games(store))) as client:
        end = _play_to_end(client, client.post("/api/games", json={"rules": {"target_points": 3}}).json(), np.random.default_rng(1))
    saved = GameStore(tmp_path / "games.sqlite3").game(end["id"])
    assert saved.status == FINISHED and len(saved.actions) == end["version"]
    assert saved.players.count(None) == 1 and saved.rules["target_points"] == 3
    assert GameStore(":memory:").journal_mode() == "memory"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _start_server(db: Path, port: int, *extra: str) -> tuple[subprocess.Popen, str]:
    """A real `play.py --web` process on `port`; it and its first line once it answers."""
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    command = [sys.executable, "-m", "euchre_lab.play", "--web", "--port", str(port), "--db", str(db),
               "--partner", "random", "--opponents", "random", *extra]
    server = subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    deadline = time.monotonic() + SERVER_START_SECONDS
    while time.monotonic() < deadline:
        assert server.poll() is None, server.stdout.read()
        try:
            httpx.get(f"http://127.0.0.1:{port}/api/options", timeout=2).raise_for_status()
            lines = [server.stdout.readline()]
            while "open http" not in lines[-1]:
                lines.append(server.stdout.readline())
            return server, "".join(lines)
        except httpx.HTTPError:
            time.sleep(0.2)
    server.kill()
    raise AssertionError("the server did not start")


def test_a_game_in_progress_survives_kill_9_and_a_restart(tmp_path):
    db, port = tmp_path / "games.sqlite3", _free_port()
    server, first_lines = _start_server(db, port, "--host", "0.0.0.0")
    try:
        assert first_lines.startswith("warning: listening on 0.0.0.0")
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=30) as http:
            assert http.get("/api/options", headers={"host": "evil.example"}).status_code == 400
            start = http.post("/api/games", json={"rules": {"target_points": 3}}).json()
            before = _play_to_end(http, start, np.random.default_rng(2), stop_at=25)
    finally:
        server.send_signal(signal.SIGKILL)
        server.wait(30)
    assert before["version"] == 25 and not before["over"]
    server, _ = _start_server(db, port)
    try:
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=30) as http:
            again = http.get(f"/api/games/{before['id']}")
            assert again.status_code == 200 and again.json() == before
            end = _play_to_end(http, again.json(), np.random.default_rng(3))
            assert http.get("/api/games/never-was").status_code == 404
    finally:
        server.send_signal(signal.SIGKILL)
        server.wait(30)
    saved = GameStore(db).game(before["id"])
    assert saved.status == FINISHED and len(saved.actions) == end["version"] and end["over"]


def test_people_games_export_as_teacher_data_that_train_distills(tmp_path, capsys):
    import train
    from euchre_agents.teacher_data import load
    from euchre_env import Engine

    db = tmp_path / "games.sqlite3"
    with _client(create_app(bots=("random", "random"), games=Games(GameStore(db)))) as client:
        for k in range(3):
            _play_to_end(client, client.post("/api/games", json={"seat": k}).json(), np.random.default_rng(k))
        client.post("/api/games", json={"rules": {"deck": 32}}).raise_for_status()  # other rules: left out
        live = _play_to_end(client, client.post("/api/games", json={}).json(), np.random.default_rng(9), stop_at=3)
    out = tmp_path / "people"
    assert play.main(["export", str(out), "--db", str(db), "--games-per-shard", "1"]) == 0
    assert live["version"] == 3  # a hand not played to its end: none of its decisions are exported
    assert "from 3 games in 3 shards (1 games of other rules left out)" in capsys.readouterr().out
    data = load(out, Engine())
    assert len(data) > 60 and data.manifest["settings"]["label"] == "people"
    chosen = data.arrays["values"][np.arange(len(data)), data.arrays["action"]]
    assert (chosen == 0).all() and data.masks(np.arange(len(data)))[np.arange(len(data)), data.arrays["action"]].all()
    assert play.main(["export", str(out), "--db", str(db)]) == 2  # never over an existing folder
    assert "already exists" in capsys.readouterr().err
    train.main([
        "--stage", "distill", "--teacher-data", str(out), "--runs-dir", str(tmp_path / "runs"), "--run-name", "people",
        "--progress", "false", "--eval-interval", "0", "--holdout-fraction", "0.34", "--distill-batch-size", "64",
        "--distill-epochs", "2", "--hidden-size", "32", "--num-layers", "1", "--action-value-coef", "0",
    ])
    assert (tmp_path / "runs" / "people" / "checkpoints" / "latest.pt").exists()


# ------------------------------------------------------------------ 6. play.py's command line


@pytest.mark.parametrize(
    "args, message",
    [
        (["--web", "--port", "99999"], "--port must be between 1 and 65535, got 99999"),
        (["--delay", "-1"], "--delay must be 0 or more, got -1.0"),
        (["--delay", "nan"], "--delay must be a finite number, got nan"),
        (["--port", "eighty"], "option port: expected int"),
        (["export"], "the following arguments are required: OUT"),
    ],
)
def test_bad_play_command_lines_get_one_line_and_exit_2(args, message, capsys):
    try:
        status = play.main(args)
    except SystemExit as parser_exit:  # argparse's own refusals exit from inside the parser
        status = parser_exit.code
    err = capsys.readouterr().err
    assert status == 2 and message in err and err.strip().count("\n") == 0


def test_a_port_in_use_gets_one_line_before_any_open_message(capsys):
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        status = play.main(["--web", "--port", str(busy.getsockname()[1]), "--db", ":memory:"])
    out, err = capsys.readouterr()
    assert status == 2 and "open http" not in out
    assert "cannot listen on 127.0.0.1" in err and err.strip().count("\n") == 0


@pytest.mark.parametrize("args", [["--web"], []])
def test_without_the_play_extra_one_line_names_the_install_command(args):
    code = (
        "import sys; [sys.modules.__setitem__(m, None) for m in ('fastapi', 'uvicorn', 'rich')];"
        f"from euchre_lab.play import main; sys.exit(main({args!r}))"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 2, done.stderr
    assert "pip install 'euchre-lab[play]'" in done.stderr and done.stderr.strip().count("\n") == 0


def test_the_listening_socket_is_tcp_so_that_replies_are_not_held_back():
    from euchre_play.web import listening_socket

    sock = listening_socket("127.0.0.1", 0)
    try:
        assert sock.proto == socket.IPPROTO_TCP  # asyncio sets TCP_NODELAY only on such sockets
    finally:
        sock.close()
