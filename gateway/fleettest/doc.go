// Package fleettest runs a real fleet on loopback: one Iggy server and three `iggy-kafka serve`
// gateways sharing it, each a separate process started from the binary the package builds once
// in TestMain, on random free ports. The server is `iggy-kafka store` (fsync always), or the real
// iggy-server, one node or a cluster of three, when IGGY_KAFKA_TEST_IGGY_SERVER names one
// (package internal/testiggy). Its tests stop, crash, freeze and
// restart those processes under load from franz-go clients and check what Kafka promises across
// it: every acknowledged record stored once at its offset and read once by the consumer group,
// no rebalance because a gateway went away, committed offsets intact, and never two gateways
// answering as coordinator of one group at once. TestSaramaGroupChurn drives IBM/sarama's
// consumer-group churn instead, as a program of its own module (scripts/clients/sarama/churn)
// that the test builds. Groups of other client families run beside a run's own or in the
// SIGKILL measurement (groupFamily): franz-go, librdkafka (cgo) and the Java client (the
// GroupMembers program of scripts/clients/java, built with Maven into the user cache), classic
// and KIP-848 each. The partition harness runs every process in a network namespace of its own,
// where a test cuts links or degrades them (delay and loss, through a TUN device in the router).
//
// The two types to know are fleet (the processes, their flags and logs, and the signals the
// scenarios send them) and run (the load on a fleet: producers, a two-member consumer group,
// classic or KIP-848, the coordinator probe, and the checks made at the end). Everything else lives in _test.go files;
// this file holds only the pieces the tests share with tools outside the package.
package fleettest

import "github.com/iggy-kafka/iggy-kafka/gateway/coordinator/record"

// LogPartitions is the number of partitions of the coordinator log.
const LogPartitions = record.Partitions

// LogPartition is the coordinator log partition of a consumer group, by the gateways' own rule.
func LogPartition(group string) int { return record.Partition(group) }
