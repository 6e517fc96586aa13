"""scripts/play's narrated deal (until the daemon and the client exist)."""

from client.demo import main, narrate_deal


def test_narrated_deal_ends_with_a_score_or_a_void_deal() -> None:
    for players in (3, 4, 5):
        for seed in range(20):
            lines = narrate_deal(players, seed, "en")
            last = lines[-1]
            assert last.startswith(("Score:", "Void deal"))
            if last.startswith("Score:"):
                assert sum(int(s) for s in last.split(":")[1].split()) == 0
                assert sum(1 for line in lines if line.startswith("Trick ")) == {3: 24, 4: 18, 5: 15}[players]


def test_french_is_the_default(capsys: object) -> None:
    assert main(["--players", "5", "--seed", "3"]) == 0
    out = capsys.readouterr().out  # type: ignore[attr-defined]
    assert "Joueur" in out and "Pli 1" in out
