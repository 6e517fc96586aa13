"""A stranger guessing a table's invite code online, as a process of its own — what the LAN
tests run in a network namespace of its own, as a host of the LAN would: fresh keys, one after
the other, each running CPace exchanges (:mod:`protocol.pake`) with the opener as fast as it
answers, every one for a wrong code.  Prints, as one JSON object, what the opener made of the
exchanges of each key (``code``, ``wait``, ``locked``; ``proven`` never, or the code was right).

    python tests/guesser.py --listen 198.18.50.2 --port 47500 --opener tcp://198.18.50.1:47400 \\
        --key HEX --keys 3 --guesses 100 --code WRNG0C0D
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

import msgpack

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from protocol import pake
from protocol.replication.identity import Identity
from tarotd.mesh import Mesh, PeerStatus

LOBBY = "lobby"


async def one_key(args: argparse.Namespace, port: int) -> dict[str, int]:
    identity = Identity.generate()
    received: list[dict[str, Any]] = []

    async def on_message(peer: bytes, channel: str, body: bytes) -> None:
        if channel == LOBBY:
            frame = msgpack.unpackb(body, raw=False)
            if isinstance(frame, dict):
                received.append(frame)

    def on_status(status: PeerStatus) -> None:
        pass

    mesh = Mesh(
        identity,
        f"tcp://{args.listen}:{port}",
        on_message=on_message,
        on_status=on_status,
        name="intrus",
        curve=True,
    )
    await mesh.start()
    opener = bytes.fromhex(args.key)
    mesh.connect(args.opener, opener)
    deadline = time.monotonic() + 60
    while not (tables := [f["table"] for f in received if f.get("t") == "offer"]):
        if time.monotonic() > deadline:
            raise SystemExit("no offer from the opener in 60 s")
        await asyncio.sleep(0.1)
    table = tables[0]

    async def reply(sid: bytes, seen: int) -> dict[str, Any]:
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            for frame in received[seen:]:
                if frame.get("sid") == sid:
                    return frame
            await asyncio.sleep(0.001)
        raise SystemExit("the opener did not answer a knock within 10 s")

    def send(frame: dict[str, Any]) -> None:
        mesh.send(opener, LOBBY, msgpack.packb(frame, use_bin_type=True))

    outcomes: dict[str, int] = {}
    for _ in range(args.guesses):
        run = pake.Joining.start(
            args.code.encode(), pake.channel(table, identity.public_key, opener), os.urandom
        )
        seen = len(received)
        send({"t": "knock", "table": table, "sid": run.sid, "share": run.share})
        frame = await reply(run.sid, seen)
        if frame["t"] == "answer":
            seen = len(received)
            send({"t": "prove", "table": table, "sid": run.sid, "tag": run.answer(frame["share"])})
            frame = await reply(run.sid, seen)
        outcome = "proven" if frame["t"] == "proven" else str(frame["why"])
        outcomes[outcome] = outcomes.get(outcome, 0) + 1
    await mesh.close()
    return outcomes


async def main(args: argparse.Namespace) -> None:
    began = time.monotonic()
    keys = [await one_key(args, args.port + k) for k in range(args.keys)]
    print(json.dumps({"keys": keys, "seconds": time.monotonic() - began}))


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--listen", required=True)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--opener", required=True)
    parser.add_argument("--key", required=True)
    parser.add_argument("--keys", type=int, default=1)
    parser.add_argument("--guesses", type=int, default=100)
    parser.add_argument("--code", default="WRNG0C0D")
    asyncio.run(main(parser.parse_args()))
