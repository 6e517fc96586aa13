"""The client's words in French and English.

The game's own words stay French in both languages — preneur, chien, écart, poignée, garde,
petit au bout — as players say them at any table; only the sentences around them change.
The daemon's refusals come in English from the rules engine: the common ones are given a
French sentence here, the others are shown as they are.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

LANGUAGES = ("fr", "en")

#: The contracts by their API code, in French in both languages.
CONTRACTS = {"pass": "Passe", "petite": "Petite", "garde": "Garde", "garde-sans": "Garde Sans", "garde-contre": "Garde Contre"}

_TEXT: dict[str, dict[str, str]] = {
    "fr": {
        "title": "Tarot — {name} [{fingerprint}]",
        "table_title": "Table « {table} » — donne {deal} — donneur : {dealer}",
        "you": "vous",
        "dealer_mark": "donneur",
        "taker": "preneur",
        "partner": "partenaire",
        "away": "absent depuis {seconds} s",
        "contract_line": "Preneur : {taker} — {contract}",
        "called": "appel : {card}",
        "partner_unknown": "partenaire inconnu",
        "chelem_announced": "chelem annoncé",
        "chien": "Chien : {cards}",
        "ecart_own": "Votre écart : {cards}",
        "trick": "Pli {number}",
        "last_trick": "Dernier pli (n° {number}) — pour {winner}",
        "no_last_trick": "Aucun pli n'est encore tombé.",
        "hand": "Votre main",
        # What to do now.
        "prompt_bid": "À vous d'annoncer :",
        "prompt_call": "Appelez une carte :",
        "prompt_ecart": "Votre écart : {count}/{size} cartes{trumps} — Espace choisit, Entrée valide",
        "prompt_ecart_trumps": ", dont {needed} atout(s) (montrés)",
        "prompt_chelem": "Annoncez-vous le chelem ?",
        "prompt_play": "À vous de jouer : ←/→ choisit une carte jouable, Entrée la joue",
        "prompt_poignee_offer": " — m : montrer une poignée ({sizes})",
        "prompt_poignee": "Poignée : {count} atouts choisis ({sizes}) — Espace choisit, Entrée montre, Échap annule",
        "prompt_wait": "{who} réfléchit…",
        "prompt_wait_deal": "La donne se prépare (mélange et distribution chiffrés)…",
        "prompt_between": "Donne marquée. n : donne suivante — q : quitter",
        "prompt_finished": "La partie est finie. q : quitter",
        "yes": "Oui",
        "no": "Non",
        # The log of the deal.
        "log_deal": "Donne {deal}, donneur : {dealer}",
        "log_pass": "{who} passe",
        "log_bid": "{who} : {contract}",
        "log_call": "{who} appelle le {card}",
        "log_chien": "Chien : {cards}",
        "log_ecart_trumps": "{who} écarte des atouts : {cards}",
        "log_chelem": "{who} annonce le chelem",
        "log_poignee": "{who} montre une poignée {size} : {cards}",
        "log_trick": "Pli {number} pour {who} : {cards}",
        "log_partner": "Le partenaire est {who}",
        "log_petit_au_bout": "Petit au bout pour {who}",
        # The score sheet.
        "sheet": "Feuille de marque",
        "sheet_deal": "Donne",
        "sheet_contract": "Contrat",
        "sheet_void": "donne nulle",
        "sheet_total": "Total",
        "sheet_empty": "Aucune donne marquée pour l'instant.",
        "verdict": "Tricherie constatée à la donne {deal} : {who} — étape « {step} » : {rule}.",
        "verdict_unattributed": "Donne {deal} arrêtée à l'étape « {step} » : {rule} (auteur non établi).",
        "verdict_proof": "Preuve : la transcription signée est dans {path} (tarot audit la vérifie).",
        # The lobby.
        "lobby": "Salon — les tables vues sur le réseau",
        "lobby_none": "Aucune table pour l'instant : ouvrez-en une (3, 4 ou 5).",
        "lobby_table": "{name}  {count}/{seats} places  {state}  {members}",
        "lobby_state_open": "ouverte",
        "lobby_state_full": "complète",
        "lobby_state_ready": "prête",
        "lobby_ours": " ← votre table",
        "lobby_invite": "  code d'invitation : {code}",
        "invite_prompt": "Code d'invitation de « {table} » : {code}▏ — Entrée rejoindre, Échap annuler",
        "lobby_peers": "Voisins : {peers}",
        "lobby_no_peers": "Aucun voisin vu pour l'instant.",
        "lobby_keys": "↑/↓ table — Entrée rejoindre — i code d'invitation — 3/4/5 ouvrir une table — b ajouter un bot — x quitter la table — q quitter",
        "opened": "Table ouverte : les places se remplissent.",
        "joined": "Vous avez rejoint la table.",
        "bot_added": "Bot ajouté : {bot}.",
        "left": "Vous avez quitté la table.",
        # Messages.
        "connected": "Connecté au démon de {home}.",
        "daemon_gone": "Le démon s'est arrêté. Relancez-le : tarotd --home {home} (ou scripts/play) ; q pour quitter.",
        "daemon_missing": "Aucun démon ne tourne avec le dossier {home}.\nLancez-le d'abord : tarotd --home {home} &  puis tarot --home {home} : ouvrez une table au salon (3, 4 ou 5) et ajoutez des bots (b).\nOu jouez tout de suite contre des bots : scripts/play",
        "peer_away": "{who} ne répond plus depuis {seconds} s ; la table l'attend.",
        # A fault of our own daemon's machine (tarotd.store.LocalFault): the table is paused here.
        "paused_disk-full": "Le disque de votre démon est plein (depuis {seconds} s) : la table est en pause ici et "
                            "reprend d'elle-même dès qu'il y a de la place ; rien n'est perdu.",
        "paused_disk-error": "Le disque de votre démon ne répond plus (depuis {seconds} s) : la table est en pause ici et "
                             "reprend d'elle-même quand il répond ; rien n'est perdu.",
        "paused_no-descriptors": "Votre démon n'a plus de descripteur de fichier libre (depuis {seconds} s) : la table est "
                                 "en pause ici et reprend d'elle-même ; rien n'est perdu.",
        "refused": "Refusé : {reason}",
        "pick_more": "Il faut encore {count} carte(s).",
        "ecart_full": "L'écart compte déjà {size} cartes : retirez-en une d'abord.",
        "ecart_forbidden": "Ni roi ni bout à l'écart.",
        "ecart_trump": "Un atout ne va à l'écart que si vous ne pouvez faire autrement.",
        "ecart_trumps_enough": "Vous écartez déjà les {needed} atout(s) nécessaires.",
        "ecart_not_trump": "Il faut d'abord garder la place des {needed} atout(s) nécessaires.",
        "poignee_not_trump": "Une poignée ne montre que des atouts.",
        "poignee_excuse": "L'Excuse ne complète une poignée que si vous montrez tous vos atouts.",
        "poignee_full": "Une poignée compte au plus {count} atouts.",
        "poignee_size": "Une poignée compte exactement {sizes} atouts.",
        "not_legal": "Cette carte ne peut pas être jouée maintenant.",
        "not_your_turn": "Ce n'est pas à vous.",
        "help_line_play": "←/→ choisir — Entrée valider — Espace marquer — d dernier pli — Tab marque/journal — ? aide — q quitter",
        "help": (
            "Aide — touches\n\n"
            "  ←/→ ou h/l     choisir une carte ou une annonce\n"
            "  Entrée         valider (jouer la carte, annoncer, écarter, montrer)\n"
            "  Espace         marquer une carte pour l'écart ou la poignée\n"
            "  p t g s c      Passe, Petite, Garde, Garde Sans, Garde Contre\n"
            "  o / n          oui / non au chelem\n"
            "  m              montrer une poignée (avant votre première carte)\n"
            "  Échap          annuler la poignée\n"
            "  d              voir le dernier pli\n"
            "  Tab            marque ou journal de la donne\n"
            "  n              donne suivante (une fois la donne marquée)\n"
            "  ↑/↓ Entrée     au salon : choisir et rejoindre une table\n"
            "  i              au salon : taper le code d'invitation de la table, puis Entrée\n"
            "  3 4 5          au salon : ouvrir une table de 3, 4 ou 5\n"
            "  b / x          au salon : ajouter un bot / quitter la table\n"
            "  q              quitter (le démon garde votre place)\n"
            "  souris         un clic sur une carte ou une annonce la choisit\n\n"
            "  ? ferme l'aide"
        ),
    },
    "en": {
        "title": "Tarot — {name} [{fingerprint}]",
        "table_title": "Table “{table}” — deal {deal} — dealer: {dealer}",
        "you": "you",
        "dealer_mark": "dealer",
        "taker": "preneur",
        "partner": "partner",
        "away": "away for {seconds} s",
        "contract_line": "Preneur: {taker} — {contract}",
        "called": "called: {card}",
        "partner_unknown": "partner unknown",
        "chelem_announced": "chelem announced",
        "chien": "Chien: {cards}",
        "ecart_own": "Your écart: {cards}",
        "trick": "Trick {number}",
        "last_trick": "Last trick (no. {number}) — to {winner}",
        "no_last_trick": "No trick has fallen yet.",
        "hand": "Your hand",
        "prompt_bid": "Your bid:",
        "prompt_call": "Call a card:",
        "prompt_ecart": "Your écart: {count}/{size} cards{trumps} — Space picks, Enter confirms",
        "prompt_ecart_trumps": ", {needed} of them trumps (shown)",
        "prompt_chelem": "Do you announce a chelem?",
        "prompt_play": "Your turn: ←/→ picks a playable card, Enter plays it",
        "prompt_poignee_offer": " — m: show a poignée ({sizes})",
        "prompt_poignee": "Poignée: {count} trumps picked ({sizes}) — Space picks, Enter shows, Esc cancels",
        "prompt_wait": "{who} is thinking…",
        "prompt_wait_deal": "The deal is being prepared (encrypted shuffle and deal)…",
        "prompt_between": "Deal scored. n: next deal — q: quit",
        "prompt_finished": "The game is over. q: quit",
        "yes": "Yes",
        "no": "No",
        "log_deal": "Deal {deal}, dealer: {dealer}",
        "log_pass": "{who} passes",
        "log_bid": "{who}: {contract}",
        "log_call": "{who} calls the {card}",
        "log_chien": "Chien: {cards}",
        "log_ecart_trumps": "{who} puts trumps in the écart: {cards}",
        "log_chelem": "{who} announces a chelem",
        "log_poignee": "{who} shows a poignée {size}: {cards}",
        "log_trick": "Trick {number} to {who}: {cards}",
        "log_partner": "The partner is {who}",
        "log_petit_au_bout": "Petit au bout for {who}",
        "sheet": "Score sheet",
        "sheet_deal": "Deal",
        "sheet_contract": "Contract",
        "sheet_void": "void deal",
        "sheet_total": "Total",
        "sheet_empty": "No deal scored yet.",
        "verdict": "Cheating found in deal {deal}: {who} — step “{step}”: {rule}.",
        "verdict_unattributed": "Deal {deal} stopped at step “{step}”: {rule} (culprit not established).",
        "verdict_proof": "Proof: the signed transcript is in {path} (tarot audit checks it).",
        "lobby": "Lobby — the tables seen on the network",
        "lobby_none": "No table yet: open one (3, 4 or 5).",
        "lobby_table": "{name}  {count}/{seats} seats  {state}  {members}",
        "lobby_state_open": "open",
        "lobby_state_full": "full",
        "lobby_state_ready": "ready",
        "lobby_ours": " ← your table",
        "lobby_invite": "  invite code: {code}",
        "invite_prompt": "Invite code of “{table}”: {code}▏ — Enter join, Esc cancel",
        "lobby_peers": "Neighbours: {peers}",
        "lobby_no_peers": "No neighbour seen yet.",
        "lobby_keys": "↑/↓ table — Enter join — i invite code — 3/4/5 open a table — b add a bot — x leave the table — q quit",
        "opened": "Table opened: the seats are filling.",
        "joined": "You joined the table.",
        "bot_added": "Bot added: {bot}.",
        "left": "You left the table.",
        "connected": "Connected to the daemon of {home}.",
        "daemon_gone": "The daemon has stopped. Start it again: tarotd --home {home} (or scripts/play); q to quit.",
        "daemon_missing": "No daemon is running with the home {home}.\nStart one first: tarotd --home {home} &  then tarot --home {home}: open a table in the lobby (3, 4 or 5) and add bots (b).\nOr play against bots at once: scripts/play",
        "peer_away": "{who} has not answered for {seconds} s; the table waits for them.",
        "paused_disk-full": "Your daemon's disk is full (for {seconds} s): the table is paused here and goes on by "
                            "itself once there is room; nothing is lost.",
        "paused_disk-error": "Your daemon's disk does not answer (for {seconds} s): the table is paused here and goes on "
                             "by itself once it does; nothing is lost.",
        "paused_no-descriptors": "Your daemon has no file descriptor left (for {seconds} s): the table is paused here and "
                                 "goes on by itself; nothing is lost.",
        "refused": "Refused: {reason}",
        "pick_more": "{count} more card(s) needed.",
        "ecart_full": "The écart already holds {size} cards: take one back first.",
        "ecart_forbidden": "No king and no bout in the écart.",
        "ecart_trump": "A trump may go to the écart only when you cannot do otherwise.",
        "ecart_trumps_enough": "You already put the {needed} trump(s) needed in the écart.",
        "ecart_not_trump": "Keep room for the {needed} trump(s) needed first.",
        "poignee_not_trump": "A poignée shows trumps only.",
        "poignee_excuse": "The Excuse completes a poignée only when you show all your trumps.",
        "poignee_full": "A poignée holds at most {count} trumps.",
        "poignee_size": "A poignée holds exactly {sizes} trumps.",
        "not_legal": "This card cannot be played now.",
        "not_your_turn": "It is not your turn.",
        "help_line_play": "←/→ pick — Enter confirm — Space mark — d last trick — Tab scores/log — ? help — q quit",
        "help": (
            "Help — keys\n\n"
            "  ←/→ or h/l     pick a card or a bid\n"
            "  Enter          confirm (play the card, bid, make the écart, show)\n"
            "  Space          mark a card for the écart or the poignée\n"
            "  p t g s c      Passe, Petite, Garde, Garde Sans, Garde Contre\n"
            "  y / n          yes / no to the chelem\n"
            "  m              show a poignée (before your first card)\n"
            "  Esc            cancel the poignée\n"
            "  d              see the last trick\n"
            "  Tab            score sheet or log of the deal\n"
            "  n              next deal (once the deal is scored)\n"
            "  ↑/↓ Enter      in the lobby: pick and join a table\n"
            "  i              in the lobby: type the table's invite code, then Enter\n"
            "  3 4 5          in the lobby: open a table of 3, 4 or 5\n"
            "  b / x          in the lobby: add a bot / leave the table\n"
            "  q              quit (the daemon keeps your seat)\n"
            "  mouse          a click on a card or a bid picks it\n\n"
            "  ? closes the help"
        ),
    },
}

#: The rules engine's common refusals (a fragment of the English sentence) in French.
_REFUSALS_FR: tuple[tuple[str, str], ...] = (
    ("trump may go to the écart only when", "un atout ne va à l'écart que si vous ne pouvez faire autrement"),
    ("neither a king nor a bout may go to the écart", "ni roi ni bout à l'écart"),
    ("the écart must be exactly", "l'écart doit compter exactement le nombre de cartes du chien"),
    ("is not your turn", "ce n'est pas à vous"),
    ("is not in your hand", "cette carte n'est pas dans votre main"),
    ("the excuse may be shown in a poignée only", "l'Excuse ne complète une poignée que si vous n'avez pas d'autre atout"),
    ("a poignée shows exactly", "une poignée compte exactement le nombre d'atouts du seuil"),
    ("a poignée is shown once", "une poignée se montre une fois, juste avant votre première carte"),
    ("you must follow suit", "il faut fournir à la couleur demandée"),
    ("you must play a trump higher", "il faut monter à l'atout"),
    ("you must play a trump", "il faut couper"),
    ("the first lead may not be in the called suit", "pas d'entame dans la couleur appelée, sauf avec la carte appelée"),
    ("cannot be called", "cette carte ne peut pas être appelée"),
    ("a bid must be higher", "il faut annoncer plus haut"),
    ("the table is full", "la table est complète"),
    ("open or join a table first", "ouvrez ou rejoignez d'abord une table"),
    ("not at a table yet", "vous n'êtes pas encore à une table : ouvrez-en une ou rejoignez-en une"),
    ("not over", "la donne n'est pas finie"),
    ("opened by a daemon you do not know", "cette table est ouverte par un démon que le vôtre ne connaît pas : "
     "tapez i et son code d'invitation, affiché chez qui l'a ouverte"),
    ("is not the invite code of the table", "ce n'est pas le code d'invitation de cette table"),
    ("is not an invite code", "un code d'invitation compte 8 lettres et chiffres, comme 7KQ2-M9XD"),
    ("the table is paused", "la table est en pause ici (voyez pourquoi au-dessus de la table) : votre coup n'a pas été pris"),
)


class Texts:
    """The sentences of one language: ``texts("prompt_bid")``, ``texts("away", seconds=3)``."""

    def __init__(self, lang: str) -> None:
        if lang not in LANGUAGES:
            raise ValueError(f"unknown language {lang!r}: use one of {', '.join(LANGUAGES)}")
        self.lang = lang
        self._text = _TEXT[lang]

    def __call__(self, key: str, **params: object) -> str:
        return self._text[key].format(**params)

    def keys(self) -> set[str]:
        return set(self._text)

    def refusal(self, message: str) -> str:
        """The daemon's refusal, in the player's language when it is a common one."""
        if self.lang == "fr":
            lowered = message.lower()
            for fragment, french in _REFUSALS_FR:
                if fragment.lower() in lowered:
                    return self("refused", reason=french)
        return self("refused", reason=message)


def language_from_environment(environ: Mapping[str, str] | None = None) -> str:
    """``fr`` when the locale is French (LC_ALL, then LC_MESSAGES, then LANG), else ``en``."""
    environ = os.environ if environ is None else environ
    for variable in ("LC_ALL", "LC_MESSAGES", "LANG"):
        value = environ.get(variable, "")
        if value:
            return "fr" if value.lower().startswith("fr") else "en"
    return "en"
