"""What the whole suite shares.

* The marks ``daemons`` and ``heavy``, given here by module (or by test, in a module that is
  otherwise pure) rather than in every file.  ``-m "not daemons"`` runs the pure half: the
  tests that start no daemon, socket, subprocess, tmux or network namespace; and
  ``-m "not daemons and not heavy"`` its quick part, in under a minute.  In a run whose ``-m``
  names ``daemons``, a test left unmarked is held to it: opening a socket or starting a process
  fails it, saying where to mark it.
* ``slow`` tests run only when ``-m`` names ``slow`` (``-m slow``; ``-m "slow or not slow"``
  for everything): ``-m "not daemons"`` leaves them out too.
* No Hypothesis deadline: a wall-clock bound on each example fails on a loaded machine and
  says nothing of the code.
* The group's work runs on the tools' threads (:data:`client.workers.TOOLS`), as in ``tarot``:
  the protocol alone runs serially, and the suite's in-process deals took a third longer so.
"""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
from collections.abc import Callable, Iterator
from typing import Any

import pytest
import zmq
from hypothesis import settings

from client.workers import TOOLS
from protocol.deck.group import binding_file, use_scheduler

use_scheduler(TOOLS)

# rbcl leaves its copy of libsodium in the temporary directory at each import: the suite's own
# process removes it once loaded, as the programs do (tests/test_binding_file.py).
if (_loaded := binding_file()) is not None:
    with contextlib.suppress(OSError):
        os.unlink(_loaded)

# On the profile Hypothesis loaded: its ``ci`` one under CI=true (derandomized), or its default.
settings.register_profile("tarot", parent=settings.default, deadline=None)
settings.load_profile("tarot")

#: Modules every test of which starts daemons, opens sockets (ZeroMQ's too), starts
#: processes, drives tmux or builds network namespaces (or nearly every one: a module of
#: daemons with a stray pure test stays whole).
DAEMON_MODULES = frozenset(
    {
        "test_agreement_lan",
        "test_binding_file",
        "test_bot_tags_daemons",
        "test_chaos",
        "test_cheat_daemons",
        "test_curve",
        "test_daemon_api",
        "test_daemon_away",
        "test_daemon_identity",
        "test_daemon_integration",
        "test_daemon_lobby_api",
        "test_daemon_malformed",
        "test_daemon_resume",
        "test_daemon_store_faults",
        "test_discovery_flood",
        "test_event_daemons",
        "test_faultsim",
        "test_flood",
        "test_flood_lan",
        "test_fuzz",
        "test_invite_guesses",
        "test_invite_guesses_lan",
        "test_gate",
        "test_hello",
        "test_lan",
        "test_lan_daemons",
        "test_load",
        "test_lobby_hijack",
        "test_local_flood",
        "test_loop_free",
        "test_mesh",
        "test_event_round_client",
        "test_mesh_bounds",
        "test_play_lang_tmux",
        "test_play_tmux",
        "test_regroup",
        "test_start_errors",
        "test_table_start",
        "test_tui_app",
        "test_tui_club_tmux",
        "test_tui_event_keys",
        "test_event_night_clients",
        "test_tui_terminal",
        "test_unreachable_peer",
        "test_wheel",
        "test_join",
        "test_v2_home",
        "test_zsocket",
    }
)

#: The tests that do, in modules otherwise pure (by function name: every parameter).
DAEMON_TESTS: dict[str, frozenset[str]] = {
    "test_bench": frozenset(
        {
            "test_a_daemon_that_cannot_start_is_a_clear_error",
            "test_the_whole_quick_bench_with_real_daemons",
        }
    ),
    "test_check_priority": frozenset(
        {
            "test_a_forked_child_checks_in_its_own_background",
            "test_a_forked_child_multiplies_over_its_own_threads",
        }
    ),
    "test_discovery": frozenset(
        {
            "test_three_daemons_find_each_other_by_loopback_broadcast",
            "test_unicast_targets_and_current_announcement",
            "test_a_silent_peer_expires",
            "test_malformed_datagrams_are_counted_and_floods_rate_limited",
            "test_the_beacon_loop_survives_a_failing_announcement",
            "test_broadcast_addresses_skip_loopback",
            "test_an_address_added_without_brd_gets_the_broadcast_of_its_subnet",
            "test_discovery_says_once_that_it_reaches_no_network_and_once_that_it_does_again",
        }
    ),
    "test_home_store": frozenset(
        {
            "test_a_second_daemon_is_refused_and_told_the_holders_pid",
            "test_kill_9_mid_write_leaves_a_consistent_prefix_and_the_deal_resumes",
            "test_an_unclean_stop_whose_log_is_deleted_stops_the_tables_it_was_playing",
            "test_a_full_disk_is_a_fault_that_keeps_nothing_half_and_clears",
        }
    ),
    "test_match": frozenset({"test_a_match_spread_over_processes_is_the_same_match"}),
    "test_mutants": frozenset({"test_every_mutant_is_killed"}),
    "test_options": frozenset(
        {
            "test_tarotd_refuses_at_start_what_it_used_to_take",
            "test_tarotd_refuses_an_address_that_is_not_this_machines",
            "test_tarotd_refuses_a_port_taken_by_another_program",
            "test_tarotd_says_so_when_the_discovery_port_is_held",
            "test_scripts_play_refuses_a_bad_value_before_it_starts_anything",
            "test_tarot_refuses_an_empty_home",
        }
    ),
    "test_score_cli": frozenset(
        {
            "test_subprocess_python_m",
            "test_console_script",
            "test_no_command_opens_the_game_and_without_a_daemon_says_how_to_start_one",
        }
    ),
    "test_silence": frozenset(
        {
            "test_seats_that_each_answer_within_the_timeout_are_never_timed_out",
            "test_a_player_deciding_at_a_daemon_that_answers_has_the_decision_timeout",
        }
    ),
}

#: Pure, but seconds of CPU a test: whole deals with the deck's cryptography, long property
#: and fuzz runs.  ``-m "not daemons and not heavy"`` is the quick loop.
HEAVY_MODULES = frozenset(
    {
        "test_agreement",
        "test_audit_penalties",
        "test_audit_skip",
        "test_audit_trust",
        "test_check_priority",
        "test_cheats",
        "test_deal_tamper",
        "test_deck_secrecy",
        "test_deck_tamper",
        "test_event_desk",
        "test_fastgame",
        "test_manifest",
        "test_match",
        "test_observed_deal",
        "test_properties",
        "test_replicated_deal",
        "test_resume",
        "test_runner",
        "test_sim_long",
    }
)

HEAVY_TESTS: dict[str, frozenset[str]] = {
    "test_bench": frozenset({"test_the_in_process_figures_are_measured_against_the_floor"}),
    "test_bots": frozenset(
        {
            "test_bots_only_make_legal_choices",
            "test_basic_takers_make_their_contracts_more_often_than_random_ones",
            "test_strong_bots_pass_few_deals_at_four",
        }
    ),
    "test_deck": frozenset(
        {
            "test_identical_seeds_replay_byte_identically",
            "test_every_seat_can_verify_everything_itself",
            "test_arbitrary_wire_objects_raise_nothing_but_wire_errors",
            "test_the_whole_deal_audits_clean_and_tells_the_true_hands",
            "test_every_seat_decrypts_exactly_its_own_cards",
        }
    ),
    "test_discovery": frozenset(
        {
            "test_round_trip_property",
            "test_fuzz_signed_bodies",
            "test_fuzz_signed_fields",
        }
    ),
    "test_event_record": frozenset(
        {
            "test_thirteen_players_sit_five_four_four",
            "test_the_organisers_restart_loses_nothing",
            "test_best_against_best_seats_by_the_ranking_of_the_rows",
            "test_a_substitute_takes_the_place_of_a_player_who_left",
        }
    ),
    "test_lobby": frozenset(
        {
            "test_daemons_wanting_one_table_name_converge_on_one_table",
            "test_a_strangers_offer_under_the_smallest_id_makes_nobody_withdraw_or_join",
        }
    ),
    "test_messages": frozenset(
        {
            "test_fuzz_random_bytes",
            "test_fuzz_mutated_valid_frames",
            "test_fuzz_well_formed_frames_with_random_fields",
            "test_fuzz_one_field_replaced",
        }
    ),
    "test_movement": frozenset(
        {
            "test_every_player_is_seated_exactly_once_per_round_at_legal_tables",
            "test_the_random_movement_keeps_repeat_meetings_low",
        }
    ),
    "test_score_cli": frozenset(
        {"test_the_sheet_of_real_deals_shows_each_penalty_row_and_a_scored_deal_as_scored"}
    ),
    "test_soundness": frozenset(
        {
            "test_deal_and_chien_keys_of_the_wrong_count_name_their_sender",
            "test_a_shuffle_payload_with_a_proof_list_of_the_wrong_length_names_its_sender",
        }
    ),
    "test_transcript": frozenset({"test_every_single_byte_flip_is_detected"}),
}

MARKS = (
    (pytest.mark.daemons, DAEMON_MODULES, DAEMON_TESTS),
    (pytest.mark.heavy, HEAVY_MODULES, HEAVY_TESTS),
)


def _marked(item: pytest.Item, modules: frozenset[str], tests: dict[str, frozenset[str]]) -> bool:
    module = item.path.stem
    name = item.originalname if isinstance(item, pytest.Function) else item.name
    return module in modules or name in tests.get(module, frozenset())


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        for mark, modules, tests in MARKS:
            if _marked(item, modules, tests):
                item.add_marker(mark)
    if "slow" not in config.getoption("markexpr"):
        slow = [item for item in items if item.get_closest_marker("slow") is not None]
        if slow:
            config.hook.pytest_deselected(items=slow)
            items[:] = [item for item in items if item.get_closest_marker("slow") is None]


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
    if "daemons" not in item.config.getoption("markexpr") or item.get_closest_marker("daemons"):
        yield
        return
    with pytest.MonkeyPatch.context() as patch:
        for owner, name in OPENERS:
            patch.setattr(owner, name, _refused(item, owner, name))
        yield


#: What a pure test must not call: where sockets and processes begin.
OPENERS: tuple[tuple[Any, str], ...] = (
    (socket.socket, "__init__"),
    (subprocess.Popen, "__init__"),
    (os, "fork"),
    (os, "posix_spawn"),
    (os, "posix_spawnp"),
    (zmq.Context, "socket"),
)


def _refused(item: pytest.Item, owner: Any, name: str) -> Callable[..., Any]:
    original = getattr(owner, name)

    def refuse(*args: Any, **kwargs: Any) -> Any:
        if owner is socket.socket and (len(args) > 4 or kwargs.get("fileno") is not None):
            return original(*args, **kwargs)  # a descriptor wrapped: asyncio's socketpair
        called = f"{getattr(owner, '__name__', owner)}.{name}"
        pytest.fail(
            f"{item.nodeid} is not marked daemons but calls {called}: add its module to "
            "DAEMON_MODULES in tests/conftest.py (or the test to DAEMON_TESTS)"
        )

    return refuse
