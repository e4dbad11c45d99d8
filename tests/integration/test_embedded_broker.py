"""The embedded broker (Kombu's SQLAlchemy transport on SQLite) polls at the configured interval.

Kombu's default (1 s) capped an embedded worker at about one tick per slot per second; the interval is
a setting now (``SLEEPCOMPACT_BROKER_POLLING_INTERVAL``, default 0.1 s), carried by our subclass of the
transport, whose engine never receives it (``create_engine`` refuses unknown options).
"""

from __future__ import annotations

from pathlib import Path

from sleepcompact import Settings
from sleepcompact.adapters.broker_transport import Transport
from sleepcompact.adapters.queue import make_celery


def test_the_polling_interval_reaches_the_transport_and_messages_flow(tmp_path: Path) -> None:
    url = f"sqla+sqlite:///{tmp_path}/broker.db"
    settings = Settings(broker_url=url, broker_polling_interval=0.05)
    app = make_celery(settings)
    with app.connection_for_write() as conn:
        assert isinstance(conn.transport, Transport)
        assert conn.transport.polling_interval == 0.05
        queue = conn.SimpleQueue("sleep-test")
        queue.put({"conversation_id": "conv_1", "tick_key": "k"})
        message = queue.get(timeout=5)
        assert message.payload == {"conversation_id": "conv_1", "tick_key": "k"}
        message.ack()
        queue.close()
    assert (tmp_path / "broker.db").is_file()  # the URL without its sqla+ prefix names the same file


def test_the_interval_is_a_setting_read_from_the_environment() -> None:
    env = {"SLEEPCOMPACT_BROKER_POLLING_INTERVAL": "0.25"}
    assert Settings.from_env(env).broker_polling_interval == 0.25
    assert Settings.from_env({}).broker_polling_interval == 0.1
