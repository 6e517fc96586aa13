"""The client's words in French and English.

The game's own words stay French in both languages — preneur, chien, écart, poignée, garde,
petit au bout — as players say them at any table; only the sentences around them change.
The rules engine's refusals are translated from their :class:`~protocol.rules.rules.Rule`
code and parameters (:meth:`Texts.rule`), and the daemon's from their
:class:`~protocol.refusal.Refusal` code and parameters (:meth:`Texts.refusal`) — never from
its English words, which it sends beside them for older clients and scripts.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Mapping

from protocol.refusal import Refusal, rule_error
from protocol.rules.cards import Card, Suit
from protocol.rules.deal import Phase
from protocol.rules.rules import Rule, RuleError
from protocol.rules.variants import Contract, PoigneeSize

LANGUAGES = ("fr", "en")

#: The contracts by their API code, in French in both languages.
CONTRACTS = {
    "pass": "Passe",
    "petite": "Petite",
    "garde": "Garde",
    "garde-sans": "Garde Sans",
    "garde-contre": "Garde Contre",
}

#: A suit as the sentences name it (the same in both languages).
SUIT_SYMBOLS = {Suit.SPADES: "♠", Suit.HEARTS: "♥", Suit.DIAMONDS: "♦", Suit.CLUBS: "♣"}


def rule_key(rule: Rule) -> str:
    """The sentence that says ``rule``: ``Rule.FOLLOW_SUIT`` → ``rule_follow_suit``."""
    return f"rule_{rule.name.lower()}"


def refusal_key(refusal: Refusal) -> str:
    """The words that say the daemon's ``refusal``: ``Refusal.TABLE_FULL`` →
    ``refusal_table_full``."""
    return f"refusal_{refusal.name.lower()}"


_TEXT: dict[str, dict[str, str]] = {
    "fr": {
        "title": "Tarot — {name} [{fingerprint}]",
        "table_title": "Table « {table} » — donne {deal} — donneur : {dealer}",
        "you": "vous",
        "dealer_mark": "donneur",
        "taker": "preneur",
        "partner": "partenaire",
        "poignee": "poignée",
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
        "prompt_ecart": "Votre écart : {count}/{size} cartes{trumps} — Espace choisit, Entrée "
        "valide",
        "prompt_ecart_trumps": ", dont {needed} atout(s) (montrés)",
        "prompt_chelem": "Annoncez-vous le chelem ?",
        "prompt_play": "À vous de jouer : ←/→ choisit une carte jouable, Entrée la joue",
        "prompt_poignee_offer": " — m : montrer une poignée ({sizes})",
        "prompt_poignee": "Poignée : {count} atouts choisis ({sizes}) — Espace choisit, Entrée "
        "montre, Échap annule",
        "prompt_wait": "{who} réfléchit…",
        "prompt_wait_deal": "La donne se prépare (mélange et distribution chiffrés)…",
        "prompt_between": "Donne marquée. n : donne suivante — q : quitter",
        "prompt_finished": "La partie est finie. q : quitter",
        "prompt_round_over": "Position jouée : votre démon vous placera à la position suivante "
        "(Tab : le tournoi).",
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
        "verdict_unattributed": "Donne {deal} arrêtée à l'étape « {step} » : {rule} (auteur non "
        "établi).",
        "verdict_proof": "Preuve : la transcription signée est dans {path} (tarot audit la "
        "vérifie).",
        # The lobby.
        "lobby": "Salon — les tables vues sur le réseau",
        "lobby_none": "Aucune table pour l'instant : ouvrez-en une (3, 4 ou 5).",
        "lobby_table": "{name}  {count}/{seats} places  {state}  {members}",
        "lobby_state_open": "ouverte",
        "lobby_state_full": "complète",
        "lobby_state_ready": "prête",
        "lobby_state_withdrawn": "retirée",
        "lobby_ours": " ← votre table",
        "lobby_invite": "  code d'invitation : {code}",
        "lobby_unverified": "Non vérifiées — ouvertes par des inconnus : rien ne dit qu'elles sont "
        "celles d'un ami ; on ne les rejoint qu'avec leur code (i)",
        "lobby_unverified_mark": "  (non vérifiée)",
        "lobby_refused_code": "  — son hôte refuse ce code : ce n'est pas le sien",
        "lobby_refused_wait": "  — trop de codes faux d'ici : réessayez dans un moment",
        "lobby_refused_locked": "  — son hôte ne répond plus à ce démon : trop de codes faux",
        "lobby_refused_silent": "  — son hôte n'a pas répondu au code",
        "invite_prompt": "Code d'invitation de « {table} » : {code}▏ — Entrée rejoindre, Échap "
        "annuler",
        "lobby_peers": "Voisins : {peers}",
        "lobby_no_peers": "Aucun voisin vu pour l'instant.",
        "lobby_keys": "↑/↓ table ou tournoi — Entrée rejoindre, s'inscrire — e lancer votre "
        "tournoi — b ajouter un bot (sur un tournoi : ses bots) — i code d'invitation — 3/4/5 "
        "ouvrir une table — x quitter la table — q quitter",
        # Events: club nights and tournaments (tarot event).
        "lobby_events": "Tournois — vus sur le réseau",
        "event_heard": "« {name} » par [{organiser}] — {role}{players}{progress}",
        "event_not_registered": "Entrée : s'inscrire",
        "event_role_player": "inscrit",
        "event_role_organiser": "vous l'organisez",
        "event_players": ", {count} joueurs",
        "event_players_one": ", {count} joueur",
        "event_progress": ", {closed}/{rounds} positions jouées",
        "event_header": "Tournoi « {name} » — {rounds} de {deals}, tables de {tables} ; {role}",
        "event_seat": "Vous êtes à la table {table} de la position {round}, avec {others}",
        "event_playing": "Position {round} en cours — lignes de marque attendues : {rows}",
        "event_awaited": "  table {table} : donnes {deals} à venir",
        "event_awaited_one": "  table {table} : donne {deals} à venir",
        "rounds_one": "{count} position",
        "rounds_many": "{count} positions",
        "deals_one": "{count} donne",
        "deals_many": "{count} donnes",
        "event_column_place": "Pl.",
        "event_column_player": "Joueur",
        "event_column_total": "Total",
        "event_column_key": "Clé",
        "event_column_round": "P{round}",
        "event_round_open": "{points:>+5d} ({played}/{deals} donnes)",
        "event_round_started": "en cours",
        "event_over": "Le tournoi est terminé.",
        "event_waiting_start": "Inscrits : {count}. L'organisateur lancera la première position.",
        "event_waiting_start_organiser": "Inscrits : {count}. Sur le tournoi : Entrée pour y "
        "jouer vous-même, b pour des bots, e pour lancer la première position.",
        "event_ranking": "Classement provisoire",
        "event_ranking_final": "Classement final",
        "event_ranking_none": "Aucune position jouée pour l'instant.",
        "event_fault": "ANOMALIE : {finding}\n",
        "event_none": "Aucun tournoi.",
        "event_none_heard": "Aucun tournoi vu pour l'instant (le démon de l'organisateur doit "
        "être sur le réseau, ou l'un de vos --peer).",
        "event_not_registered_cli": "non inscrit : tarot event join",
        "event_registered": "{count} inscrits : {names}",
        "event_registered_one": "{count} inscrit : {names}",
        "event_plan": "Position {round} ({movement}) :",
        "event_plan_table": "  table {table} : {members}",
        "event_joined": "Inscrit : votre démon vous placera à chaque position.",
        "event_started": "Première position lancée : les tables se forment.",
        "event_nothing_to_do": "Votre démon suit ce tournoi : il vous place à chaque position.",
        "event_joined_own": "Inscrit : vous jouez dans votre propre tournoi ; e le lance.",
        "event_start_not_ours": "Seul son organisateur lance un tournoi.",
        "event_bots_prompt": "Bots pour « {event} », hébergés par votre démon — combien ? "
        "{count}▏ ({level}, Tab pour changer) — Entrée inscrire, Échap annuler",
        "event_bots_how_many": "Tapez le nombre de bots (1 à 16), puis Entrée.",
        "event_bots_added": "Bots inscrits, hébergés par votre démon : {bots}.",
        "opened": "Table ouverte : les places se remplissent.",
        "joined": "Vous avez rejoint la table.",
        "bot_added": "Bot ajouté : {bot}.",
        "left": "Vous avez quitté la table.",
        # Messages.
        "connected": "Connecté à votre démon (tarotd : le programme qui tient votre place et "
        "parle aux démons des autres joueurs), dossier {home}.",
        "daemon_gone": "Le démon s'est arrêté. Relancez-le : tarotd --home {home} (ou "
        "scripts/play) ; q pour quitter.",
        "daemon_missing": "Aucun démon ne tourne avec le dossier {home}.\nLancez-le d'abord : "
        "tarotd --home {home} &  puis tarot --home {home} : ouvrez une table au "
        "salon (3, 4 ou 5) et ajoutez des bots (b).\nOu jouez tout de suite "
        "contre des bots : scripts/play",
        "peer_away": "{who} ne répond plus depuis {seconds} s ; la table l'attend (w : continuer "
        "sans, à une nouvelle table).",
        "lobby_silence_nothing": " — un joueur muet avant la révélation ne paie rien",
        "lobby_silence_after-seeing": " — un joueur muet après avoir vu ses cartes paie la "
        "pénalité de 100 points",
        "lobby_silence_penalty": " — un joueur muet avant la révélation paie la pénalité de 100 "
        "points",
        "regrouped": "Nouvelle table « {table} » à {seats}, sans {gone} : les autres joueurs "
        "appuient sur w pour vous y rejoindre.",
        # The deal's end waits for the other members' word (docs/agreement.md).
        "unsettled": "Votre démon a perdu les autres joueurs : il ne termine pas la donne seul et "
        "demande à chacun comment elle s'est terminée, dès qu'il les joint.",
        "rows_awaited": "Table terminée : votre démon attend que {who} aient la dernière ligne "
        "de marque (quelques minutes au plus).",
        # A fault of our own daemon's machine (tarotd.store.LocalFault): the table is paused here.
        "paused_disk-full": "Le disque de votre démon est plein (depuis {seconds} s) : la table "
        "est en pause ici et "
        "reprend d'elle-même dès qu'il y a de la place ; rien n'est perdu.",
        "paused_disk-error": "Le disque de votre démon ne répond plus (depuis {seconds} s) : la "
        "table est en pause ici et "
        "reprend d'elle-même quand il répond ; rien n'est perdu.",
        "paused_no-descriptors": "Votre démon n'a plus de descripteur de fichier libre (depuis "
        "{seconds} s) : la table est "
        "en pause ici et reprend d'elle-même ; rien n'est perdu.",
        "refused": "Refusé : {reason}",
        # The daemon's refusals, by Refusal code (see Texts.refusal): what follows "Refusé : ".
        "refusal_too_many_clients": "ce démon sert déjà {limit} clients à vous (d'autres fenêtres "
        "de tarot ou des scripts) : fermez-en un et réessayez",
        "refusal_line_too_long": "une requête de plus de {limit} octets",
        "refusal_not_json": "ce n'est pas un objet JSON : envoyez un objet JSON par ligne",
        "refusal_not_a_request": "une requête est un objet JSON avec un « op »",
        "refusal_unknown_request": "requête inconnue : {op} (votre démon est-il d'une autre "
        "version ?)",
        "refusal_malformed": "requête mal formée : voyez son champ {field}",
        "refusal_internal": "erreur interne du démon : voyez son journal",
        "refusal_not_at_table": "vous n'êtes pas encore à une table : ouvrez-en une ou "
        "rejoignez-en une",
        "refusal_no_own_seat": "ce démon n'a pas de place à lui à cette table",
        "refusal_seat_is_a_bot": "la place de ce démon est jouée par un bot (tarotd --bot) : elle "
        "ne prend pas de coup d'un client",
        "refusal_not_played_here": "la place {seat} n'est pas jouée depuis ce démon",
        "refusal_deal_scored": "la donne est marquée : demandez la suivante (n)",
        "refusal_deal_not_scored": "la donne n'est pas finie",
        "refusal_table_finished": "la partie de cette table est finie",
        "refusal_paused": "la table est en pause ici (voyez pourquoi au-dessus de la table) : "
        "votre coup n'a pas été pris",
        "refusal_max_tables": "ce démon joue déjà {playing} tables, sa limite (tarotd "
        "--max-tables)",
        "refusal_nobody_gone": "personne n'est resté muet {seconds} s (--timeout) : la table "
        "attend encore",
        "refusal_too_few_left": "une table demande trois joueurs : sans {without}, il en "
        "resterait {left}",
        "refusal_seats": "une table a 3, 4 ou 5 places",
        "refusal_no_open_table": "aucune table ouverte n'a cet identifiant",
        "refusal_not_an_invite_code": "« {invite} » n'est pas un code d'invitation : il compte "
        "{length} lettres et chiffres, comme {example}",
        "refusal_invite_too_easy": "le code « {invite} » est trop facile à deviner : laissez "
        "l'hôte en tirer un, ou inventez-en un comme {example}",
        "refusal_opener_unknown": "la table « {table} » est ouverte par un démon que le vôtre ne "
        "connaît pas : tapez i et son code d'invitation, affiché chez qui l'a ouverte",
        "refusal_invite_refused": "ce n'est pas le code d'invitation de la table « {table} » : son "
        "hôte l'a refusé",
        "refusal_invite_wait": "l'hôte de la table « {table} » demande d'attendre : trop de codes "
        "faux sont venus d'ici ; réessayez dans une minute",
        "refusal_invite_locked": "l'hôte de la table « {table} » ne répond plus à ce démon après "
        "trop de codes faux : demandez à son joueur de taper tarot unlock",
        "refusal_no_table_to_fill": "ouvrez ou rejoignez d'abord une table : un bot s'assied à une "
        "table qui se remplit",
        "refusal_table_full": "la table est complète",
        "refusal_table_started": "la partie a commencé : on ne peut plus quitter la table",
        "refusal_event_not_heard": "aucun tournoi de cet identifiant n'est entendu ici (tarot "
        "event list)",
        "refusal_event_no_such_id": "aucun tournoi n'a cet identifiant",
        "refusal_event_ambiguous_id": "plusieurs tournois : donnez davantage de l'identifiant — "
        "{events}",
        "refusal_event_not_organised_here": "aucun tournoi de cet identifiant n'est organisé ici",
        "refusal_event_not_in": "ce démon n'est pas dans ce tournoi : tarot event join",
        "refusal_event_in_already": "ce démon est déjà dans ce tournoi",
        "refusal_event_registered_already": "votre joueur est déjà inscrit à ce tournoi",
        "refusal_event_started": "le tournoi a déjà commencé",
        "refusal_event_no_round_open": "aucune position n'est ouverte",
        "refusal_event_player_unknown": "« {player} » n'est pas un joueur inscrit",
        "refusal_event_player_ambiguous": "« {player} » désigne plus d'un joueur inscrit",
        "refusal_event_place_held": "{player} a déjà une place",
        "refusal_event_name": "le nom d'un tournoi compte au plus {most} caractères",
        "refusal_event_rounds": "un tournoi compte de 1 à {most} positions",
        "refusal_event_deals": "une position compte de 1 à {most} donnes par table",
        "refusal_event_table_size": "les tables d'un tournoi sont de 4 ou de 5",
        "refusal_event_too_few_players": "une position demande au moins 3 joueurs inscrits, pas "
        "{players}",
        "refusal_event_too_many_players": "{players} joueurs, c'est plus que les {tables} tables "
        "d'un tournoi",
        "refusal_event_bot_level": "le niveau d'un bot est l'un de : {levels}",
        "refusal_event_bots_count": "de 1 à {most} bots à la fois",
        "refusal_event_bots_full": "ce démon héberge {hosted} bots de tournoi, dont {free} "
        "libres : au plus {most} en tout",
        "pick_more": "Il faut encore {count} carte(s).",
        "ecart_full": "L'écart compte déjà {size} cartes : retirez-en une d'abord.",
        "ecart_trumps_enough": "Vous écartez déjà les {needed} atout(s) nécessaires.",
        "ecart_not_trump": "Il faut d'abord garder la place des {needed} atout(s) nécessaires.",
        "poignee_full": "Une poignée compte au plus {count} atouts.",
        "poignee_size": "Une poignée compte exactement {sizes} atouts.",
        "not_legal": "Cette carte ne peut pas être jouée maintenant.",
        "not_your_turn": "Ce n'est pas à vous.",
        # Quitting, and keys that cannot apply now.
        "quit_stays": "Quitter ? Votre démon garde votre place et la partie continue ; tarot "
        "--home {home} vous y ramène. "
        "q encore : quitter — une autre touche : rester",
        "quit_kept": "Quitter ? Les démons de scripts/play s'arrêtent ; la partie est gardée : "
        "scripts/play --home {home} "
        "la reprend. q encore : quitter — une autre touche : rester",
        "quit_gone": "Quitter ? La partie se termine : les démons de scripts/play s'arrêtent et "
        "la partie est effacée "
        "(scripts/play --home DOSSIER en garde une). q encore : quitter — une autre touche : "
        "rester",
        "quit_cancelled": "Vous restez à la table.",
        "enter_between": "Entrée ne fait rien ici : n lance la donne suivante, r rejoue une donne.",
        "bid_gone": "Une {contract} n'est plus possible : les annonces sont déjà plus haut.",
        "not_bidding": "Aucune annonce ne vous est demandée maintenant.",
        "not_chelem": "Le chelem ne vous est pas demandé maintenant.",
        "poignee_too_few": "Une poignée demande {count} atouts à {players} joueurs (l'Excuse "
        "comptant pour un) : vous en avez {held}.",
        "poignee_late": "Une poignée se montre juste avant votre première carte : c'est passé.",
        "poignee_not_now": "Une poignée se montre quand vous jouez votre première carte.",
        "no_replay": "Aucune donne marquée à rejouer pour l'instant.",
        "no_replay_unplayed": "Rien à rejouer : les donnes marquées jusqu'ici n'ont pas été "
        "jouées (tout le monde a passé, ou donne annulée).",
        "bell_on": "Alerte remise : le terminal sonne quand c'est à vous (a la coupe).",
        "bell_off": "Alerte coupée : le terminal ne sonne plus (a la remet).",
        "too_small": "Agrandissez le terminal à au moins {columns}×{rows} (il fait {now}) : la "
        "table n'y tient pas.",
        "bot_level": "bot {level}",
        # The deal's summary, as a player checks it by hand.
        "summary_title": "Donne {deal} — {taker} : {contract}",
        "summary_partner": ", partenaire {partner}",
        "summary_alone": ", seul",
        "summary_call": " (appel : {card})",
        "summary_passed": "Donne {deal} : tout le monde a passé — rien n'est marqué, le donneur "
        "suivant donne.",
        "summary_passed_last": "Donne {deal} : tout le monde a passé — rien n'est marqué ; c'était "
        "la dernière donne de cette table.",
        "summary_passed_round_over": "Donne {deal} : tout le monde a passé — rien n'est marqué ; "
        "la position est finie.",
        "round_over_next": "Cette table a fini sa dernière donne. Entrée ou n : passer à votre "
        "table suivante — r : rejouer une donne.",
        "summary_void": "Donne {deal} : donne nulle ({reason}) — rien n'est marqué.",
        "summary_points": "Attaque : {points} points avec {bouts} bout(s) : {needed} à faire — "
        "{result}",
        "summary_made": "faite de {difference}",
        "summary_failed": "chutée de {difference}",
        "summary_half": " (le demi-point va au camp gagnant)",
        "summary_contract": "Contrat : {sign}(25 + {difference}) × {multiplier} ({contract}) = "
        "{points:+d}",
        "summary_petit": "Petit au bout : {camp}, 10 × {multiplier} = {points:+d}",
        "summary_poignee": "Poignée {size} de {who} : {bonus}, au camp gagnant : {points:+d}",
        "summary_chelem": "Chelem {what} : {points:+d}",
        "chelem_made_announced": "annoncé et réussi",
        "chelem_made": "réussi sans annonce",
        "chelem_failed": "annoncé et chuté",
        "chelem_defence": "de la défense",
        "summary_unit": "Marque : {unit:+d} — {split}",
        "summary_each_defender": "chaque défenseur {points:+d}",
        "summary_penalty": "Pénalité : {who} −100 ({rule})",
        "summary_penalty_rule": "règle de la table",
        "summary_no_breakdown": "Le détail de cette donne n'a pas été gardé (marquée par une "
        "version plus ancienne).",
        "summary_chien": "Chien : ",
        "summary_ecart": "   Écart : ",
        "summary_hands": "Les mains distribuées :",
        "summary_hidden": "Le chien, l'écart et les mains se montrent une fois l'audit de la "
        "donne passé.",
        "camp_attack": "attaque",
        "camp_defence": "défense",
        # The replay of a deal.
        "replay_title": "Donne {deal} rejouée ({index}/{count}) — {step}",
        "replay_dealt": "les mains distribuées",
        "replay_trick": "pli {trick}/{tricks}, entamé par {leader}, pour {winner}",
        "replay_hidden": "Les mains ne se montrent qu'une fois l'audit de la donne passé ; seuls "
        "les plis sont publics.",
        # Verdicts: a proven deviation, or a silence (never called cheating).
        "verdict_proven": "Tricherie prouvée à la donne {deal} : {who} — étape « {step} » : "
        "{rule}.",
        "verdict_silence": "Donne {deal} abandonnée : {who} a cessé de répondre à l'étape « "
        "{step} » "
        "(rien n'est prouvé : {reporters} l'ont signalé muet).",
        "verdict_silence_scored": "Donne {deal} marquée sans la graine de {who}, qui ne l'a pas "
        "révélée à temps (rien n'est prouvé : {reporters} l'ont signalé muet).",
        "verdict_penalty": "{who} paie la pénalité de 100 points.",
        "verdict_rule_unknown": "la règle enfreinte est dans la preuve (tarot audit la détaille)",
        "peer_state_connecting": "en connexion",
        "peer_state_up": "connecté",
        "peer_state_away": "absent",
        # The help line: the keys of the moment.
        "keys_bidding": "←/→ ou p t g s c : choisir — Entrée : annoncer — ? aide — q quitter",
        "keys_call": "←/→ : choisir la carte — Entrée : appeler — ? aide — q quitter",
        "keys_chelem": "o/n ou ←/→ : choisir — Entrée : valider — ? aide — q quitter",
        "keys_ecart": "←/→ carte — Espace : la marquer — Entrée : écarter — Tab journal — ? aide",
        "keys_poignee": "←/→ atout — Espace : marquer — Entrée : montrer — Échap : annuler — ? "
        "aide",
        "keys_playing": "←/→ carte — Entrée : jouer — m poignée — d dernier pli — Tab journal — ? "
        "aide",
        "keys_waiting": "d dernier pli — Tab journal/marque — r rejouer une donne — ? aide — q "
        "quitter",
        "keys_between": "n donne suivante — r rejouer — Tab journal/marque — ? aide — q quitter",
        "keys_finished": "r rejouer une donne — Tab journal/marque — ? aide — q quitter",
        "keys_held": "Entrée/n table suivante — r rejouer — Tab journal/marque — ? aide — "
        "q quitter",
        "keys_replay": "←/→ pli précédent/suivant — ↑/↓ donne — Échap ou r : fermer",
        "keys_help": "? ou Échap : fermer l'aide",
        # The rules engine's refusals, by Rule code (see Texts.rule), and their words.
        "rule_not_in_hand": "{card} n'est pas dans votre main.",
        "rule_called_suit_lead": "Pas d'entame à {suit}, la couleur appelée, sauf avec la carte "
        "appelée.",
        "rule_follow_suit": "Il faut fournir à {suit}.",
        "rule_follow_trump": "Il faut jouer atout : l'entame est à l'atout.",
        "rule_trump": "Il faut couper : vous n'avez plus de {suit}.",
        "rule_overtrump": "Il faut monter sur le {rank}.",
        "rule_card_elsewhere": "{card} ne peut pas être dans la main du siège {seat}.",
        "rule_trick_without_winner": "Un pli fait de l'Excuse seule n'a pas de gagnant.",
        "rule_bid_not_higher": "Il faut annoncer plus haut que {highest}.",
        "rule_call_higher_rank": "Pour appeler {card}, il faut tenir les quatre cartes de chaque "
        "rang au-dessus.",
        "rule_call_not_a_king": "{card} ne s'appelle pas : appelez un roi (ou une dame avec les "
        "quatre rois).",
        "rule_call_not_a_face": "{card} ne s'appelle pas : appelez un roi, une dame, un cavalier "
        "ou un valet.",
        "rule_chien_known": "Le chien est déjà connu, avec d'autres cartes.",
        "rule_chien_size": "Le chien compte {size} cartes.",
        "rule_ecart_before_chien": "L'écart se fait une fois le chien retourné.",
        "rule_ecart_size": "L'écart compte exactement {size} cartes différentes.",
        "rule_ecart_king_or_bout": "{card} : ni roi ni bout à l'écart.",
        "rule_ecart_trump": "Un atout ne va à l'écart que si vous ne pouvez faire autrement.",
        "rule_ecart_not_listed": "L'écart se choisit carte par carte, pas dans une liste.",
        "rule_ecart_own": "L'écart du preneur se donne en entier.",
        "rule_ecart_shown_not_trump": "De l'écart, on ne montre que des atouts autres que les "
        "bouts.",
        "rule_poignee_repeated": "Une poignée montre chaque atout une seule fois.",
        "rule_poignee_not_held": "{card} n'est ni dans votre main ni parmi les atouts de votre "
        "écart.",
        "rule_poignee_not_trump": "{card} n'est pas un atout : une poignée ne montre que des "
        "atouts (et peut-être l'Excuse).",
        "rule_poignee_size": "Une poignée compte exactement {counts} atouts à {players} joueurs.",
        "rule_poignee_excuse": "L'Excuse ne complète une poignée que si vous n'avez pas d'autre "
        "atout.",
        "rule_poignee_too_few": "Cette main n'a pas assez d'atouts pour une poignée {size}.",
        "rule_poignee_late": "Une poignée se montre une fois, juste avant votre première carte.",
        "rule_not_your_turn": "Ce n'est pas au siège {seat} de jouer, mais au siège {to_act}.",
        "rule_wrong_phase": "Pas maintenant : cela se fait à l'étape « {expected} », et la donne "
        "en est à l'étape « {phase} ».",
        "rule_hand_hidden": "La main du siège {seat} n'est pas visible ici.",
        "rule_deal_over": "La donne est finie.",
        "rule_deal_not_over": "La donne n'est pas finie.",
        "rule_piles_unknown": "Les plis se comptent sur toute la donne, une fois les mains "
        "révélées.",
        "rule_not_to_decide": "Ce n'est pas à vous de décider maintenant.",
        "rule_voted_void": "Vous avez voté l'annulation de la donne : vous n'y jouez plus.",
        "rule_other_seat": "Cette machine joue la place {plays}, pas la place {seat}.",
        "rule_other": "{message}",
        "phase_bidding": "annonces",
        "phase_call": "appel",
        "phase_ecart": "écart",
        "phase_chelem": "chelem",
        "phase_playing": "jeu de la carte",
        "phase_done": "fin de la donne",
        "phase_void": "donne annulée",
        "rule_nothing": "rien",
        "rule_trumps": "atout",
        "help": (
            "Aide — touches\n"
            "  ←/→ ou h/l     choisir une carte ou une annonce\n"
            "  Entrée         valider : jouer la carte, annoncer, écarter, montrer\n"
            "  Espace         marquer une carte pour l'écart ou la poignée\n"
            "  p t g s c      choisir Passe, Petite, Garde, Garde Sans, Garde Contre\n"
            "  o / n          choisir oui / non au chelem (Entrée valide)\n"
            "  m / Échap      montrer une poignée (avant votre première carte) / y renoncer\n"
            "  d / Tab        le dernier pli / le journal, la marque ou le tournoi\n"
            "  n / r          donne suivante (donne marquée) / rejouer les donnes pli à pli\n"
            "  ↑/↓ Entrée i   au salon : choisir, rejoindre (table, tournoi), taper un code\n"
            "  3 4 5 / b / x  au salon : ouvrir une table / ajouter un bot / quitter la table\n"
            "  e / b          sur un tournoi : le lancer (organisateur) / y inscrire des bots\n"
            "  w              un joueur parti pour de bon : continuer sans lui\n"
            "  a / q          l'alerte quand c'est à vous : couper, remettre / quitter\n"
            "  souris         un clic sur une carte ou une annonce la choisit\n"
            "\n"
            "  Les atouts sont leurs nombres, de 1 (le Petit) à 21 ; ★ est l'Excuse ;\n"
            "  R D C V : roi, dame, cavalier, valet."
        ),
    },
    "en": {
        "title": "Tarot — {name} [{fingerprint}]",
        "table_title": "Table “{table}” — deal {deal} — dealer: {dealer}",
        "you": "you",
        "dealer_mark": "dealer",
        "taker": "preneur",
        "partner": "partner",
        "poignee": "poignée",
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
        "prompt_poignee": "Poignée: {count} trumps picked ({sizes}) — Space picks, Enter shows, "
        "Esc cancels",
        "prompt_wait": "{who} is thinking…",
        "prompt_wait_deal": "The deal is being prepared (encrypted shuffle and deal)…",
        "prompt_between": "Deal scored. n: next deal — q: quit",
        "prompt_finished": "The game is over. q: quit",
        "prompt_round_over": "Round played: your daemon will seat you at the next round (Tab: the "
        "event).",
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
        "verdict_unattributed": "Deal {deal} stopped at step “{step}”: {rule} (culprit not "
        "established).",
        "verdict_proof": "Proof: the signed transcript is in {path} (tarot audit checks it).",
        "lobby": "Lobby — the tables seen on the network",
        "lobby_none": "No table yet: open one (3, 4 or 5).",
        "lobby_table": "{name}  {count}/{seats} seats  {state}  {members}",
        "lobby_state_open": "open",
        "lobby_state_full": "full",
        "lobby_state_ready": "ready",
        "lobby_state_withdrawn": "withdrawn",
        "lobby_ours": " ← your table",
        "lobby_invite": "  invite code: {code}",
        "lobby_unverified": "Unverified — opened by daemons you do not know: nothing says they are "
        "a friend's; joined only with their code (i)",
        "lobby_unverified_mark": "  (unverified)",
        "lobby_refused_code": "  — its host refuses that code: it is not its code",
        "lobby_refused_wait": "  — too many wrong codes from here: try again in a while",
        "lobby_refused_locked": "  — its host no longer answers this daemon: too many wrong codes",
        "lobby_refused_silent": "  — its host did not answer the code",
        "invite_prompt": "Invite code of “{table}”: {code}▏ — Enter join, Esc cancel",
        "lobby_peers": "Neighbours: {peers}",
        "lobby_no_peers": "No neighbour seen yet.",
        "lobby_keys": "↑/↓ table or event — Enter join, register — e start your event — b add "
        "a bot (on an event: its bots) — i invite code — 3/4/5 open a table — x leave the table "
        "— q quit",
        "lobby_events": "Events — seen on the network",
        "event_heard": "“{name}” by [{organiser}] — {role}{players}{progress}",
        "event_not_registered": "Enter: register",
        "event_role_player": "registered",
        "event_role_organiser": "you organise it",
        "event_players": ", {count} players",
        "event_players_one": ", {count} player",
        "event_progress": ", {closed}/{rounds} rounds played",
        "event_header": "Event “{name}” — {rounds} of {deals}, tables of {tables}; {role}",
        "event_seat": "You sit at table {table} of round {round}, with {others}",
        "event_playing": "Round {round} is being played — score rows awaited: {rows}",
        "event_awaited": "  table {table}: deals {deals} to come",
        "event_awaited_one": "  table {table}: deal {deals} to come",
        "rounds_one": "{count} round",
        "rounds_many": "{count} rounds",
        "deals_one": "{count} deal",
        "deals_many": "{count} deals",
        "event_column_place": "Pl.",
        "event_column_player": "Player",
        "event_column_total": "Total",
        "event_column_key": "Key",
        "event_column_round": "R{round}",
        "event_round_open": "{points:>+5d} ({played}/{deals} deals)",
        "event_round_started": "in progress",
        "event_over": "The event is over.",
        "event_waiting_start": "Registered: {count}. The organiser will start the first round.",
        "event_waiting_start_organiser": "Registered: {count}. On the event: Enter to play in it "
        "yourself, b for bots, e to start the first round.",
        "event_ranking": "Ranking so far",
        "event_ranking_final": "Final ranking",
        "event_ranking_none": "No round played yet.",
        "event_fault": "FAULT: {finding}\n",
        "event_none": "No event.",
        "event_none_heard": "No event seen yet (the organiser's daemon must be on the LAN, or one "
        "of your --peer).",
        "event_not_registered_cli": "not registered: tarot event join",
        "event_registered": "{count} registered: {names}",
        "event_registered_one": "{count} registered: {names}",
        "event_plan": "Round {round} ({movement}):",
        "event_plan_table": "  table {table}: {members}",
        "event_joined": "Registered: your daemon will seat you at every round.",
        "event_started": "First round started: the tables are forming.",
        "event_nothing_to_do": "Your daemon follows this event: it seats you at every round.",
        "event_joined_own": "Registered: you play in your own event; e starts it.",
        "event_start_not_ours": "Only its organiser starts an event.",
        "event_bots_prompt": "Bots for “{event}”, hosted by your daemon — how many? {count}▏ "
        "({level}, Tab to change) — Enter register, Esc cancel",
        "event_bots_how_many": "Type how many bots (1 to 16), then Enter.",
        "event_bots_added": "Bots registered, hosted by your daemon: {bots}.",
        "opened": "Table opened: the seats are filling.",
        "joined": "You joined the table.",
        "bot_added": "Bot added: {bot}.",
        "left": "You left the table.",
        "connected": "Connected to your daemon (tarotd: the program that holds your seat and "
        "talks to the other players' daemons), home {home}.",
        "daemon_gone": "The daemon has stopped. Start it again: tarotd --home {home} (or "
        "scripts/play); q to quit.",
        "daemon_missing": "No daemon is running with the home {home}.\nStart one first: tarotd "
        "--home {home} &  then tarot --home {home}: open a table in the lobby "
        "(3, 4 or 5) and add bots (b).\nOr play against bots at once: "
        "scripts/play",
        "peer_away": "{who} has not answered for {seconds} s; the table waits for them (w: go on "
        "without them, at a new table).",
        "lobby_silence_nothing": " — a player silent before the reveal pays nothing",
        "lobby_silence_after-seeing": " — a player silent after seeing their cards takes the "
        "100-point penalty",
        "lobby_silence_penalty": " — a player silent before the reveal takes the 100-point penalty",
        "regrouped": "A new table “{table}” of {seats}, without {gone}: the other players press w "
        "to join you there.",
        "unsettled": "Your daemon lost the other players: it does not end the deal alone, and "
        "asks each of them how it ended as soon as it reaches them.",
        "rows_awaited": "Table finished: your daemon waits until {who} hold the last row of the "
        "score sheet (a few minutes at most).",
        "paused_disk-full": "Your daemon's disk is full (for {seconds} s): the table is paused "
        "here and goes on by "
        "itself once there is room; nothing is lost.",
        "paused_disk-error": "Your daemon's disk does not answer (for {seconds} s): the table is "
        "paused here and goes on "
        "by itself once it does; nothing is lost.",
        "paused_no-descriptors": "Your daemon has no file descriptor left (for {seconds} s): the "
        "table is paused here and "
        "goes on by itself; nothing is lost.",
        "refused": "Refused: {reason}",
        # The daemon's refusals, by Refusal code (see Texts.refusal): what follows "Refused: ".
        "refusal_too_many_clients": "this daemon already serves {limit} clients of yours (other "
        "tarot windows or scripts): close one of them and try again",
        "refusal_line_too_long": "a request longer than {limit} bytes",
        "refusal_not_json": "not a JSON object: send one JSON object per line",
        "refusal_not_a_request": "a request is a JSON object with an “op”",
        "refusal_unknown_request": "unknown request: {op} (is your daemon of another version?)",
        "refusal_malformed": "a malformed request: see its field {field}",
        "refusal_internal": "internal error in the daemon: see its log",
        "refusal_not_at_table": "you are not at a table yet: open or join one",
        "refusal_no_own_seat": "this daemon has no seat of its own at the table",
        "refusal_seat_is_a_bot": "this daemon's seat is played by a bot (tarotd --bot): it takes "
        "no moves from a client",
        "refusal_not_played_here": "seat {seat} is not played from this daemon",
        "refusal_deal_scored": "the deal is scored: ask for the next one (n)",
        "refusal_deal_not_scored": "the deal is not over yet",
        "refusal_table_finished": "the game at this table has finished",
        "refusal_paused": "the table is paused here (see why above the table): your move was not "
        "taken",
        "refusal_max_tables": "this daemon already plays {playing} tables, its limit (tarotd "
        "--max-tables)",
        "refusal_nobody_gone": "no member has been silent for {seconds} s (--timeout) yet: the "
        "table waits for them",
        "refusal_too_few_left": "a table needs three players: without {without}, {left} would be "
        "left",
        "refusal_seats": "a table has 3, 4 or 5 seats",
        "refusal_no_open_table": "no open table has this id",
        "refusal_not_an_invite_code": "“{invite}” is not an invite code: {length} letters and "
        "digits, such as {example}",
        "refusal_invite_too_easy": "the invite code “{invite}” is too easy to guess: let the "
        "opener draw one, or make up one such as {example}",
        "refusal_opener_unknown": "the table “{table}” was opened by a daemon yours does not know: "
        "type i and its invite code, which its opener's screen shows",
        "refusal_invite_refused": "that is not the invite code of the table “{table}”: its opener "
        "refused it",
        "refusal_invite_wait": "the opener of the table “{table}” asks you to wait: too many wrong "
        "invite codes came from here; try again in a minute",
        "refusal_invite_locked": "the opener of the table “{table}” no longer answers this daemon "
        "after too many wrong invite codes: ask its player to run tarot unlock",
        "refusal_no_table_to_fill": "open or join a table first: a bot takes a seat at a table "
        "that is filling",
        "refusal_table_full": "the table is full",
        "refusal_table_started": "the table has started: it can no longer be left",
        "refusal_event_not_heard": "no event of that id is heard here (tarot event list)",
        "refusal_event_no_such_id": "no event has that id",
        "refusal_event_ambiguous_id": "several events: give more of the id — {events}",
        "refusal_event_not_organised_here": "no event of that id is organised here",
        "refusal_event_not_in": "this daemon is not in that event: tarot event join",
        "refusal_event_in_already": "this daemon is in that event already",
        "refusal_event_registered_already": "your player is registered in that event already",
        "refusal_event_started": "the event has started already",
        "refusal_event_no_round_open": "no round is open",
        "refusal_event_player_unknown": "“{player}” is no registered player",
        "refusal_event_player_ambiguous": "“{player}” is more than one registered player",
        "refusal_event_place_held": "{player} holds a place already",
        "refusal_event_name": "an event's name is at most {most} characters",
        "refusal_event_rounds": "an event has 1 to {most} rounds",
        "refusal_event_deals": "a round has 1 to {most} deals a table",
        "refusal_event_table_size": "an event's tables are of 4 or of 5",
        "refusal_event_too_few_players": "a round needs at least 3 registered players, not "
        "{players}",
        "refusal_event_too_many_players": "{players} players is over the {tables} tables an event "
        "seats",
        "refusal_event_bot_level": "a bot's level is one of: {levels}",
        "refusal_event_bots_count": "1 to {most} bots at a time",
        "refusal_event_bots_full": "this daemon hosts {hosted} event bots, {free} of them free: at "
        "most {most} in all",
        "pick_more": "{count} more card(s) needed.",
        "ecart_full": "The écart already holds {size} cards: take one back first.",
        "ecart_trumps_enough": "You already put the {needed} trump(s) needed in the écart.",
        "ecart_not_trump": "Keep room for the {needed} trump(s) needed first.",
        "poignee_full": "A poignée holds at most {count} trumps.",
        "poignee_size": "A poignée holds exactly {sizes} trumps.",
        "not_legal": "This card cannot be played now.",
        "not_your_turn": "It is not your turn.",
        "quit_stays": "Quit? Your daemon keeps your seat and the game goes on; tarot --home "
        "{home} takes you back to it. "
        "q again: quit — any other key: stay",
        "quit_kept": "Quit? The daemons of scripts/play stop; the game is kept: scripts/play "
        "--home {home} takes it "
        "up again. q again: quit — any other key: stay",
        "quit_gone": "Quit? The game ends: the daemons of scripts/play stop and the game is "
        "deleted (scripts/play "
        "--home DIR keeps one). q again: quit — any other key: stay",
        "quit_cancelled": "You stay at the table.",
        "enter_between": "Enter does nothing here: n starts the next deal, r replays a deal.",
        "bid_gone": "A {contract} is no longer possible: the bidding is already above it.",
        "not_bidding": "No bid is asked of you now.",
        "not_chelem": "No chelem is asked of you now.",
        "poignee_too_few": "A poignée needs {count} trumps at {players} players (the Excuse "
        "counting as one): you hold {held}.",
        "poignee_late": "A poignée is shown just before your first card: that is past.",
        "poignee_not_now": "A poignée is shown when you play your first card.",
        "no_replay": "No deal scored yet to replay.",
        "no_replay_unplayed": "Nothing to replay: the deals scored so far were not played "
        "(everybody passed, or the deal was void).",
        "bell_on": "Turn alert on: the terminal rings when it is your turn (a silences it).",
        "bell_off": "Turn alert off: the terminal stays silent (a switches it on again).",
        "too_small": "Enlarge the terminal to at least {columns}×{rows} (it is {now}): the table "
        "does not fit.",
        "bot_level": "bot {level}",
        "summary_title": "Deal {deal} — {taker}: {contract}",
        "summary_partner": ", partner {partner}",
        "summary_alone": ", alone",
        "summary_call": " (called: {card})",
        "summary_passed": "Deal {deal}: everybody passed — nothing is scored, the next dealer "
        "deals.",
        "summary_passed_last": "Deal {deal}: everybody passed — nothing is scored; it was this "
        "table's last deal.",
        "summary_passed_round_over": "Deal {deal}: everybody passed — nothing is scored; the "
        "round is over.",
        "round_over_next": "This table has played its last deal. Enter or n: go to your next "
        "table — r: replay a deal.",
        "summary_void": "Deal {deal}: void ({reason}) — nothing is scored.",
        "summary_points": "Attack: {points} points with {bouts} bout(s): {needed} needed — "
        "{result}",
        "summary_made": "made by {difference}",
        "summary_failed": "failed by {difference}",
        "summary_half": " (the half point goes to the winning camp)",
        "summary_contract": "Contract: {sign}(25 + {difference}) × {multiplier} ({contract}) = "
        "{points:+d}",
        "summary_petit": "Petit au bout: {camp}, 10 × {multiplier} = {points:+d}",
        "summary_poignee": "Poignée {size} by {who}: {bonus}, to the winning camp: {points:+d}",
        "summary_chelem": "Chelem {what}: {points:+d}",
        "chelem_made_announced": "announced and made",
        "chelem_made": "made unannounced",
        "chelem_failed": "announced and failed",
        "chelem_defence": "by the defence",
        "summary_unit": "Score: {unit:+d} — {split}",
        "summary_each_defender": "each defender {points:+d}",
        "summary_penalty": "Penalty: {who} −100 ({rule})",
        "summary_penalty_rule": "the table's rule",
        "summary_no_breakdown": "This deal's breakdown was not kept (scored by an older version).",
        "summary_chien": "Chien: ",
        "summary_ecart": "   Écart: ",
        "summary_hands": "The hands as dealt:",
        "summary_hidden": "The chien, the écart and the hands are shown once the deal's audit has "
        "passed.",
        "camp_attack": "attack",
        "camp_defence": "defence",
        "replay_title": "Deal {deal} replayed ({index}/{count}) — {step}",
        "replay_dealt": "the hands as dealt",
        "replay_trick": "trick {trick}/{tricks}, led by {leader}, to {winner}",
        "replay_hidden": "The hands are shown only once the deal's audit has passed; only the "
        "tricks are public.",
        "verdict_proven": "Cheating proven in deal {deal}: {who} — step “{step}”: {rule}.",
        "verdict_silence": "Deal {deal} abandoned: {who} stopped answering at the “{step}” step "
        "(unproven: reported silent by {reporters}).",
        "verdict_silence_scored": "Deal {deal} scored without {who}'s seed, not revealed in "
        "time (unproven: reported silent by {reporters}).",
        "verdict_penalty": "{who} takes the 100-point penalty.",
        "verdict_rule_unknown": "the rule broken is in the proof (tarot audit tells it)",
        "peer_state_connecting": "connecting",
        "peer_state_up": "up",
        "peer_state_away": "away",
        "keys_bidding": "←/→ or p t g s c: pick a bid — Enter: bid it — ? help — q quit",
        "keys_call": "←/→: pick the card — Enter: call it — Tab log — ? help — q quit",
        "keys_chelem": "y/n or ←/→: pick — Enter: confirm — ? help — q quit",
        "keys_ecart": "←/→ card — Space: mark it — Enter: make the écart — Tab log — ? help",
        "keys_poignee": "←/→ trump — Space: mark it — Enter: show — Esc: cancel — ? help",
        "keys_playing": "←/→ card — Enter: play it — m poignée — d last trick — Tab log — ? help "
        "— q quit",
        "keys_waiting": "d last trick — Tab log/sheet — r replay a deal — ? help — q quit",
        "keys_between": "n next deal — r replay — Tab log/sheet — ? help — q quit",
        "keys_finished": "r replay a deal — Tab log/sheet — ? help — q quit",
        "keys_held": "Enter/n next table — r replay — Tab log/sheet — ? help — q quit",
        "keys_replay": "←/→ previous/next trick — ↑/↓ deal — Esc or r: close",
        "keys_help": "? or Esc: close the help",
        # The rules engine's refusals, by Rule code (see Texts.rule), and their words.
        "rule_not_in_hand": "{card} is not in your hand.",
        "rule_called_suit_lead": "No lead in {suit}, the called suit, except with the called card.",
        "rule_follow_suit": "You must follow {suit}.",
        "rule_follow_trump": "You must play a trump: trumps were led.",
        "rule_trump": "You must trump: you have no {suit} left.",
        "rule_overtrump": "You must overtrump the {rank}.",
        "rule_card_elsewhere": "{card} cannot be in seat {seat}'s hand.",
        "rule_trick_without_winner": "A trick of the Excuse alone has no winner.",
        "rule_bid_not_higher": "A bid must be higher than {highest}.",
        "rule_call_higher_rank": "To call {card}, you must hold all four cards of each higher "
        "rank.",
        "rule_call_not_a_king": "{card} cannot be called: call a king (or a queen holding the "
        "four kings).",
        "rule_call_not_a_face": "{card} cannot be called: call a king, queen, cavalier or valet.",
        "rule_chien_known": "The chien is already known, with other cards.",
        "rule_chien_size": "The chien has {size} cards.",
        "rule_ecart_before_chien": "The écart is made once the chien is turned.",
        "rule_ecart_size": "The écart is exactly {size} different cards.",
        "rule_ecart_king_or_bout": "{card}: no king and no bout in the écart.",
        "rule_ecart_trump": "A trump may go to the écart only when you cannot do otherwise.",
        "rule_ecart_not_listed": "The écart is picked card by card, not from a list.",
        "rule_ecart_own": "The taker's own écart is given whole.",
        "rule_ecart_shown_not_trump": "Only trumps other than the bouts are shown from the écart.",
        "rule_poignee_repeated": "A poignée shows each trump once.",
        "rule_poignee_not_held": "{card} is neither in your hand nor among the trumps of your "
        "écart.",
        "rule_poignee_not_trump": "{card} is not a trump: a poignée shows trumps only (and maybe "
        "the Excuse).",
        "rule_poignee_size": "A poignée holds exactly {counts} trumps at {players} players.",
        "rule_poignee_excuse": "The Excuse completes a poignée only when you hold no other trump.",
        "rule_poignee_too_few": "This hand has too few trumps for a {size} poignée.",
        "rule_poignee_late": "A poignée is shown once, just before your first card.",
        "rule_not_your_turn": "It is not seat {seat}'s turn but seat {to_act}'s.",
        "rule_wrong_phase": "Not now: that belongs to {expected}, and the deal is at {phase}.",
        "rule_hand_hidden": "Seat {seat}'s hand is not visible here.",
        "rule_deal_over": "The deal is over.",
        "rule_deal_not_over": "The deal is not over.",
        "rule_piles_unknown": "The piles are counted from the whole deal, once the hands are "
        "revealed.",
        "rule_not_to_decide": "It is not your turn to decide.",
        "rule_voted_void": "You voted to void the deal: you play no more in it.",
        "rule_other_seat": "This machine plays seat {plays}, not seat {seat}.",
        "rule_other": "{message}",
        "phase_bidding": "the bidding",
        "phase_call": "the call",
        "phase_ecart": "the écart",
        "phase_chelem": "announcing a chelem",
        "phase_playing": "the play",
        "phase_done": "the end",
        "phase_void": "a void deal",
        "rule_nothing": "nothing",
        "rule_trumps": "trumps",
        "help": (
            "Help — keys\n"
            "  ←/→ or h/l     pick a card or a bid\n"
            "  Enter          confirm: play the card, bid, make the écart, show\n"
            "  Space          mark a card for the écart or the poignée\n"
            "  p t g s c      pick Passe, Petite, Garde, Garde Sans or Garde Contre\n"
            "  y / n          pick yes / no to the chelem (Enter confirms)\n"
            "  m / Esc        show a poignée (before your first card) / give it up\n"
            "  d / Tab        the last trick / the log, the score sheet or the event\n"
            "  n / r          next deal (once scored) / replay the deals trick by trick\n"
            "  ↑/↓ Enter i    in the lobby: pick, join (table, event), type an invite code\n"
            "  3 4 5 / b / x  in the lobby: open a table / add a bot / leave the table\n"
            "  e / b          on an event: start it (its organiser) / register bots in it\n"
            "  w              a player gone for good: go on without them, at a new table\n"
            "  a / q          the bell when it is your turn: off, on again / quit\n"
            "  mouse          a click on a card or a bid picks it\n"
            "\n"
            "  Trumps are their numbers, 1 (the Petit) to 21; ★ is the Excuse;\n"
            "  K Q N J: king, queen, cavalier (knight), valet (jack)."
        ),
    },
}


class Texts:
    """The sentences of one language: ``texts("prompt_bid")``, ``texts("away", seconds=3)``."""

    def __init__(self, lang: str) -> None:
        if lang not in LANGUAGES:
            raise ValueError(f"unknown language {lang!r}: use one of {', '.join(LANGUAGES)}")
        self.lang = lang
        self._text = _TEXT[lang]

    def __call__(self, key: str, **params: object) -> str:
        return self._text[key].format(**{name: self._word(v) for name, v in params.items()})

    def _word(self, value: object) -> object:
        """A rule's parameter as the sentence says it: a card by its name, a suit by its
        symbol, a contract or a poignée by its French name, a phase in words."""
        if isinstance(value, Card):
            return value.name(self.lang)
        if isinstance(value, Suit):
            return SUIT_SYMBOLS.get(value) or self("rule_trumps")
        if isinstance(value, Contract):
            return value.french
        if isinstance(value, PoigneeSize):
            return value.code
        if isinstance(value, Phase):
            return self(f"phase_{value.value}")
        if value is None:
            return self("rule_nothing")
        return value

    def rule(self, error: RuleError) -> str:
        """Why the rules engine refuses, in this language.

        >>> from protocol.rules.cards import Suit
        >>> error = RuleError("you must follow suit (H)", Rule.FOLLOW_SUIT, suit=Suit.HEARTS)
        >>> Texts("fr").rule(error)
        'Il faut fournir à ♥.'
        """
        if error.code is Rule.OTHER:
            return self(rule_key(Rule.OTHER), message=str(error))
        return self(rule_key(error.code), **error.params)

    def keys(self) -> set[str]:
        return set(self._text)

    def counted(self, key: str, count: int) -> str:
        """``count`` things as the language says them: ``rounds`` → "1 round", "2 rounds"
        (in French the singular goes up to one: "0 donne")."""
        one = count <= 1 if self.lang == "fr" else count == 1
        return self(f"{key}_{'one' if one else 'many'}", count=count)

    def refusal(
        self, message: str, code: str | None = None, params: Mapping[str, object] | None = None
    ) -> str:
        """The daemon's refusal in this language, by its :class:`~protocol.refusal.Refusal`
        code and parameters — a rule of play as :meth:`rule` says it.  A code this client does
        not know (a newer daemon's), or none (an older one), leaves the daemon's English
        ``message``.

        >>> Texts("fr").refusal("you are not at a table yet", "not-at-table", {})
        "Refusé : vous n'êtes pas encore à une table : ouvrez-en une ou rejoignez-en une"
        >>> Texts("fr").refusal("KH: not in hand", "rule", {"rule": "not-in-hand", "card": "KH"})
        "Roi de cœur n'est pas dans votre main."
        >>> Texts("fr").refusal("a newer daemon's words", "new-code", {})
        "Refusé : a newer daemon's words"
        """
        params = params or {}
        refusal = next((r for r in Refusal if r.value == code), Refusal.OTHER)
        if refusal is Refusal.RULE:
            error = rule_error(message, params)
            if error is not None and error.code is not Rule.OTHER:
                return self.rule(error)
        elif refusal is not Refusal.OTHER:
            with contextlib.suppress(KeyError, IndexError):  # a parameter missing: its words
                return self("refused", reason=self(refusal_key(refusal), **params))
        return self("refused", reason=message)


def language_from_environment(environ: Mapping[str, str] | None = None) -> str:
    """``fr`` when the locale is French (LC_ALL, then LC_MESSAGES, then LANG), else ``en``."""
    environ = os.environ if environ is None else environ
    for variable in ("LC_ALL", "LC_MESSAGES", "LANG"):
        value = environ.get(variable, "")
        if value:
            return "fr" if value.lower().startswith("fr") else "en"
    return "en"
