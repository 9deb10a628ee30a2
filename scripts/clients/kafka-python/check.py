"""Checks that kafka-python consumer groups work against an iggy-kafka gateway.

Creates a 3-partition topic, starts two members of one group (each KafkaConsumer on its own
thread) and waits until they share the partitions, produces N numbered records, checks that the
two read each record exactly once between them, closes them (committing, leaving), produces M
more, and checks that a third run of the group reads exactly those M. Prints PASS/FAIL lines for
scripts/clients-interop.sh and the request versions kafka-python picked (from its request log);
exits 1 when a check failed.

Usage: python3 check.py BROKER TOPIC [N M [CONSUMER_API_VERSION]]
"""

import logging
import re
import sys
import threading
import time

import kafka
from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer, TopicPartition
from kafka.admin import NewTopic
from kafka.consumer.subscription_state import ConsumerRebalanceListener

BROKER, TOPIC = sys.argv[1], sys.argv[2]
N = int(sys.argv[3]) if len(sys.argv) > 3 else 300
M = int(sys.argv[4]) if len(sys.argv) > 4 else 60
# An api_version for the group's consumers ("0.10.2") pins their request versions to that
# broker's; by default kafka-python infers one from ApiVersions.
CONSUMER_API = tuple(int(x) for x in sys.argv[5].split(".")) if len(sys.argv) > 5 else None
GROUP = TOPIC + "-g"
LABEL = "kafka-python " + kafka.__version__ + (f" api_version={sys.argv[5]}" if CONSUMER_API else "")
failed = False


def ok(msg):
    print(f"PASS  {LABEL}: {msg}", flush=True)


def bad(msg):
    global failed
    failed = True
    print(f"FAIL  {LABEL}: {msg}", flush=True)


class Versions(logging.Handler):
    """Notes the requests kafka-python sends ("<conn> Request 7: FetchRequest_v10(...)") and keeps
    warnings and errors to explain a failure."""

    pattern = re.compile(r" Request \d+: (\w+?)(?:Request)?_v(\d+)\(")

    def __init__(self):
        super().__init__(logging.DEBUG)
        self.seen = {}
        self.problems = []
        self.mu = threading.Lock()

    def emit(self, record):
        try:
            msg = record.getMessage()
        except Exception:
            return
        with self.mu:
            r = self.pattern.search(msg)
            if r and record.levelno == logging.DEBUG:
                self.seen.setdefault(r.group(1), set()).add(int(r.group(2)))
            elif record.levelno >= logging.WARNING:
                self.problems.append(f"{record.name}: {msg}"[:300])

    def summary(self):
        with self.mu:
            return ", ".join(f"{k} v{','.join(map(str, sorted(v)))}" for k, v in sorted(self.seen.items()))


versions = Versions()
logging.getLogger("kafka").addHandler(versions)
logging.getLogger("kafka").setLevel(logging.DEBUG)
logging.getLogger("kafka").propagate = False


def poll(seconds, cond):
    deadline = time.monotonic() + seconds
    while not cond():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


def produce(start, end):
    p = KafkaProducer(bootstrap_servers=BROKER, acks="all", client_id="clients-interop-kafka-python")
    try:
        futures = [
            p.send(TOPIC, key=f"k{i}".encode(), value=f"record-{i}".encode(), partition=i % 3)
            for i in range(start, end)
        ]
        p.flush(30)
        for f in futures:
            f.get(timeout=30)
        ok(f"produced records {start}-{end - 1} to 3 partitions")
        return True
    except Exception as e:
        bad(f"produce records {start}-{end - 1}: {e!r}")
        return False
    finally:
        p.close(10)


class Member(ConsumerRebalanceListener):
    """One consumer of the group on its own thread, with its assignment and what it read."""

    def __init__(self, name):
        self.name = name
        self.lock = threading.Lock()
        self.assigned = []
        self.read = {}
        self.order = []
        self.partitions = set()
        self.errors = []
        self.stop = threading.Event()
        self.closed = threading.Event()
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def on_partitions_revoked(self, revoked):
        with self.lock:
            self.assigned = []

    def on_partitions_assigned(self, assigned):
        with self.lock:
            self.assigned = sorted(tp.partition for tp in assigned if tp.topic == TOPIC)

    def count(self):
        with self.lock:
            return len(self.order)

    def run(self):
        try:
            c = KafkaConsumer(
                bootstrap_servers=BROKER,
                group_id=GROUP,
                client_id="clients-interop-kafka-python-" + self.name,
                auto_offset_reset="earliest",
                enable_auto_commit=True,
                auto_commit_interval_ms=100,
                session_timeout_ms=10000,
                heartbeat_interval_ms=200,
                fetch_max_wait_ms=200,
                **({"api_version": CONSUMER_API} if CONSUMER_API else {}),
            )
        except Exception as e:
            with self.lock:
                self.errors.append(repr(e))
            self.closed.set()
            return
        try:
            c.subscribe([TOPIC], listener=self)
            while not self.stop.is_set():
                for tp, records in c.poll(timeout_ms=100).items():
                    for r in records:
                        with self.lock:
                            m = re.fullmatch(rb"record-(\d+)", r.value or b"")
                            if not m:
                                self.errors.append(f"partition {r.partition} offset {r.offset}: value {r.value!r}")
                                continue
                            i = int(m.group(1))
                            self.read[i] = self.read.get(i, 0) + 1
                            self.order.append(i)
                            self.partitions.add(r.partition)
        except Exception as e:
            with self.lock:
                self.errors.append(repr(e))
        finally:
            c.close()  # commits (auto-commit on close) and leaves the group
            self.closed.set()

    def close(self):
        self.stop.set()
        if not self.closed.wait(30):
            with self.lock:
                self.errors.append("did not close within 30 s")


def two_members():
    a, b = Member("a"), Member("b")

    def shared():
        with a.lock, b.lock:
            return bool(a.assigned) and bool(b.assigned) and sorted(a.assigned + b.assigned) == [0, 1, 2]

    if not poll(30, shared):
        bad(f"two members did not share the 3 partitions within 30 s (a {a.assigned} {a.errors}, b {b.assigned} {b.errors})")
        a.close()
        b.close()
        return False
    ok(f"two members share the partitions: a {a.assigned}, b {b.assigned}")
    if not produce(0, N):
        a.close()
        b.close()
        return False
    got = poll(30, lambda: a.count() + b.count() >= N)
    a.close()
    b.close()
    if not got:
        bad(f"the two members read {a.count()}+{b.count()} of {N} records within 30 s ({a.errors} {b.errors})")
        return False
    problems = []
    seen = {}
    for mb in (a, b):
        for i, k in mb.read.items():
            seen[i] = seen.get(i, 0) + k
    problems += [f"record {i} read {seen.get(i, 0)} times" for i in range(N) if seen.get(i, 0) != 1]
    problems += [f"unexpected record {i}" for i in seen if not 0 <= i < N]
    problems += [f"both members read partition {p}" for p in a.partitions & b.partitions]
    if not a.order or not b.order:
        problems.append("one member read nothing")
    problems += a.errors + b.errors
    if problems:
        bad("two members: " + "; ".join(problems[:10]))
        return False
    ok(f"two members read all {N} records once each (a {len(a.order)}, b {len(b.order)}), committed and left")
    return True


def resume():
    c = Member("c")
    got = poll(30, lambda: c.count() >= M)
    c.close()
    if not got:
        bad(f"third run read {c.count()} of the {M} new records within 30 s ({c.errors})")
        return
    # Anything read again would come before the new records of its partition.
    first = sorted(c.order[:M])
    if first != list(range(N, N + M)):
        bad(f"third run: the first {M} records read are not records {N}-{N + M - 1}: {first}")
    elif len(c.order) != M:
        bad(f"third run read {len(c.order)} records, want {M}")
    else:
        ok(f"third run resumed at the commits: read only records {N}-{N + M - 1}")


def committed(admin):
    tps = [TopicPartition(TOPIC, p) for p in range(3)]
    c = KafkaConsumer(bootstrap_servers=BROKER)
    try:
        ends = c.end_offsets(tps)
    finally:
        c.close()
    offsets = admin.list_consumer_group_offsets(GROUP)
    want = [f"{tp.partition}:{ends[tp]}" for tp in tps]
    got = [f"{tp.partition}:{offsets[tp].offset if tp in offsets else 'missing'}" for tp in tps]
    if got == want:
        ok(f"committed offsets equal the end offsets [{' '.join(want)}]")
    else:
        bad(f"committed offsets [{' '.join(got)}], end offsets [{' '.join(want)}]")


def main():
    admin = KafkaAdminClient(bootstrap_servers=BROKER, client_id="clients-interop-kafka-python")
    try:
        admin.create_topics([NewTopic(TOPIC, num_partitions=3, replication_factor=1)])
        ok(f"created topic {TOPIC} with 3 partitions (broker version inferred: {'.'.join(map(str, admin.config['api_version']))})")
        if not two_members():
            return
        if not produce(N, N + M):
            return
        resume()
        committed(admin)
    finally:
        admin.close()


try:
    main()
except Exception as e:
    bad(repr(e))
print(f"      {LABEL} sent: {versions.summary()}", flush=True)
if failed and versions.problems:
    print("      kafka-python warnings and errors (last 10):")
    for p in versions.problems[-10:]:
        print("        " + p)
sys.exit(1 if failed else 0)
