"""Security of the link (docs/link.md "Security"): TLS on every NATS connection, a credential per
table that may publish only on its own subject. A throwaway CA made with ``openssl`` signs the
server's certificate; the server's configuration is the one docs/link.md gives.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from link_support import InProcessController, LinkedTable, NatsServer, controller_toml, wait_for

from controller.link.link_config import Connection
from controller.link.security import nats_server_conf


def openssl() -> str:
    found = shutil.which("openssl")
    if found is None:
        if os.environ.get("CI") == "true":
            pytest.fail("openssl is not installed")
        pytest.skip("openssl is not installed")
    return found


def make_ca(d: Path) -> dict[str, Path]:
    """A CA and a server certificate for 127.0.0.1 (a throwaway, made for the test)."""
    o = openssl()

    def run(*args: str) -> None:
        subprocess.run([o, *args], cwd=d, check=True, capture_output=True)

    ec = ("-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes")
    run("req", "-x509", *ec, "-keyout", "ca-key.pem", "-out", "ca.pem", "-days", "1",
        "-subj", "/CN=paigow test CA")  # fmt: skip
    run("req", *ec, "-keyout", "server-key.pem", "-out", "server.csr", "-subj", "/CN=127.0.0.1")
    (d / "san.ext").write_text("subjectAltName=IP:127.0.0.1\n")
    run("x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca-key.pem",
        "-CAcreateserial", "-out", "server.pem", "-days", "1", "-extfile", "san.ext")  # fmt: skip
    return {"ca": d / "ca.pem", "cert": d / "server.pem", "key": d / "server-key.pem"}


@pytest.fixture()
def secure(tmp_path: Path):  # type: ignore[no-untyped-def]
    certs = make_ca(tmp_path)
    secrets: dict[str, Path] = {}
    for user in ("link-POOL1", "table-T1", "table-T2"):
        p = tmp_path / f"{user}.password"
        p.write_text(f"pw-{user}-{os.getpid()}\n")
        secrets[user] = p
    conf = tmp_path / "nats.conf"
    conf.write_text(
        nats_server_conf(
            pool="POOL1",
            controller_password=secrets["link-POOL1"].read_text().strip(),
            tables={u[6:]: secrets[u].read_text().strip() for u in secrets if u != "link-POOL1"},
            cert=certs["cert"],
            key=certs["key"],
            ca=certs["ca"],
        )
    )
    server = NatsServer(tmp_path, conf)
    server.start()
    yield server, certs, secrets
    server.kill()


async def _try_publish(conn: Connection, subject: str) -> str:
    import nats

    errors: list[str] = []

    async def on_error(exc: Exception) -> None:
        errors.append(str(exc))

    nc = await nats.connect(**conn.options(), error_cb=on_error, allow_reconnect=False)
    try:
        await nc.jetstream().publish(subject, b"{}", timeout=1.0)
        return "stored"
    except Exception as exc:
        await asyncio.sleep(0.2)
        return " ".join([type(exc).__name__, *errors])
    finally:
        await nc.close()


def test_tls_and_a_table_may_publish_only_on_its_own_subject(
    tmp_path: Path,
    secure,  # type: ignore[no-untyped-def]
    controllers: list,  # type: ignore[type-arg]
    tables: list,  # type: ignore[type-arg]
) -> None:
    server, certs, secrets = secure
    extra = (
        f'user = "link-POOL1"\npassword_file = "{secrets["link-POOL1"]}"\n'
        f'tls_ca = "{certs["ca"]}"\n'
    )
    ctl = InProcessController(controller_toml(tmp_path / "link.toml", server.url, {"T1": 70001,
                                                                             "T2": 70002},
                                         extra=extra))  # fmt: skip
    ctl.start()
    controllers.append(ctl)
    t = LinkedTable(
        tmp_path, "T1", 70001, server.url, link_extra={
            "user": "table-T1", "password_file": str(secrets["table-T1"]),
            "tls_ca": str(certs["ca"]),
        },
    )  # fmt: skip
    t.start()
    tables.append(t)
    wait_for(lambda: not t.link_down(), 20, what="T1 confirmed over TLS with its credential")
    t.open()
    wait_for(lambda: t.link.pool is not None, 10, what="the pool's value over TLS")
    mine = Connection((server.url,), "table-T1", secrets["table-T1"], certs["ca"])
    assert asyncio.run(_try_publish(mine, "table.T1.journal")) == "stored"
    refused = asyncio.run(_try_publish(mine, "table.T2.journal"))
    assert "permissions violation" in refused.lower(), refused
    plain = Connection((server.url.replace("tls://", "nats://"),), "table-T1", secrets["table-T1"])
    assert asyncio.run(_connects(plain)) is False  # no TLS: refused by the server
    wrong = Connection((server.url,), "table-T1", secrets["table-T2"], certs["ca"])
    assert asyncio.run(_connects(wrong)) is False


async def _connects(conn: Connection) -> bool:
    import nats

    async def quiet(exc: Exception) -> None:
        pass

    try:
        nc = await nats.connect(
            **conn.options(), allow_reconnect=False, connect_timeout=2, error_cb=quiet
        )
    except Exception:
        return False
    await nc.close()
    return True
