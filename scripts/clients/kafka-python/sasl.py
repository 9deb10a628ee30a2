"""Checks SASL against an iggy-kafka gateway started with --sasl, as Iggy's root user iggy.

With each of PLAIN, SCRAM-SHA-256 and SCRAM-SHA-512 (the SCRAM credentials, password iggy, set
beforehand through AlterUserScramCredentials), produces one record to partition 0 of topic
TOPIC-MECHANISM and reads it back with an assigned consumer. Prints PASS/FAIL lines for
scripts/clients-interop.sh; exits 1 when a check failed.

Usage: python3 sasl.py BROKER TOPIC
"""

import sys
import time

import kafka
from kafka import KafkaConsumer, KafkaProducer, TopicPartition

BROKER, TOPIC = sys.argv[1], sys.argv[2]
LABEL = "kafka-python " + kafka.__version__ + " SASL"
failed = False


def round_trip(mech):
    global failed
    topic, value = f"{TOPIC}-{mech}", f"v-{mech}".encode()
    auth = dict(bootstrap_servers=BROKER, security_protocol="SASL_PLAINTEXT", sasl_mechanism=mech,
                sasl_plain_username="iggy", sasl_plain_password="iggy")
    try:
        producer = KafkaProducer(**auth)
        producer.send(topic, key=b"k", value=value, partition=0).get(timeout=10)
        producer.close()
        consumer = KafkaConsumer(**auth, enable_auto_commit=False, consumer_timeout_ms=10000)
        tp = TopicPartition(topic, 0)
        consumer.assign([tp])
        consumer.seek_to_beginning(tp)
        got = []
        deadline = time.monotonic() + 10
        while not got and time.monotonic() < deadline:
            for recs in consumer.poll(timeout_ms=500).values():
                got.extend(recs)
        consumer.close()
    except Exception as e:  # a refused authentication raises; it is this check's failure
        failed = True
        print(f"FAIL  {LABEL}: {mech}: {e!r}", flush=True)
        return
    if len(got) == 1 and got[0].offset == 0 and got[0].key == b"k" and got[0].value == value:
        print(f"PASS  {LABEL}: {mech}: produced and consumed k={value.decode()}", flush=True)
    else:
        failed = True
        print(f"FAIL  {LABEL}: {mech}: consumed {[(r.offset, r.key, r.value) for r in got]}, want offset 0 k={value.decode()}", flush=True)


for mech in ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"):
    round_trip(mech)
sys.exit(1 if failed else 0)
