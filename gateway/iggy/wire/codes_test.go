package wire

import (
	"errors"
	"fmt"
	"testing"
)

func TestProtocolVersion(t *testing.T) {
	if ProtocolVersion != 11264 || PackVersion(0, 11, 0) != 0x00002C00 {
		t.Fatalf("ProtocolVersion = %d", ProtocolVersion)
	}
	if a, b, c := UnpackVersion(PackVersion(1, 1023, 7)); a != 1 || b != 1023 || c != 7 {
		t.Fatalf("unpack: %d.%d.%d", a, b, c)
	}
	if VersionString(ProtocolVersion) != "0.11.0" {
		t.Fatal(VersionString(ProtocolVersion))
	}
	for _, c := range []struct {
		client uint32
		ok     bool
	}{
		{PackVersion(0, 11, 0), true}, {PackVersion(0, 11, 9), true}, {PackVersion(0, 10, 9), false},
		{PackVersion(0, 12, 0), false}, {PackVersion(1, 0, 0), false},
	} {
		if got := VersionCompatible(c.client, ProtocolVersion); got != c.ok {
			t.Errorf("VersionCompatible(%s) = %v", VersionString(c.client), got)
		}
	}
}

func TestCodesAreErrors(t *testing.T) {
	var err error = fmt.Errorf("create: %w", StreamIDNotFound)
	if !errors.Is(err, StreamIDNotFound) || errors.Is(err, TopicIDNotFound) {
		t.Fatal("errors.Is on a wrapped Code")
	}
	var c Code
	if !errors.As(err, &c) || c != 1009 {
		t.Fatalf("errors.As: %v", c)
	}
	if StreamIDNotFound.String() != "StreamIdNotFound" || StreamIDNotFound.Error() != "iggy: stream id not found (1009)" {
		t.Fatalf("names: %q %q", StreamIDNotFound.String(), StreamIDNotFound.Error())
	}
	if Code(60001).Known() || Code(60001).Error() != "iggy: error code 60001" {
		t.Fatal("unknown code")
	}
	if n := len(Codes()); n != 238 {
		t.Fatalf("want the full 238-code table, have %d", n)
	}
	// Spot-check codes the gateway maps (section 12 of the protocol notes).
	for code, want := range map[Code]Code{
		3: InvalidCommand, 4: InvalidFormat, 20: ResourceNotFound, 40: Unauthenticated, 57: TransientNotCommitted,
		1012: StreamNameAlreadyExists, 2013: TopicNameAlreadyExists, 3007: PartitionNotFound,
		3021: ConsumerOffsetNotFound, 4041: UnsupportedOptionKey, 4100: InvalidOffset,
		5009: ConsumerGroupPartitionNotOwned, 14003: IncompatibleProtocolVersion, 4056: ProducerSendFailed,
	} {
		if code != want {
			t.Errorf("code %d is %v", uint32(code), want)
		}
	}
	if !TransientNotAccepted.Transient() || InvalidCommand.Transient() {
		t.Fatal("Transient")
	}
}

func TestCommandOperations(t *testing.T) {
	cases := []struct {
		cmd    Command
		op     Operation
		framed bool
	}{
		{CmdPing, OpNonReplicated, false}, {CmdGetStats, OpNonReplicated, false},
		{CmdCreateUser, OpCreateUser, true}, {CmdLogoutUser, OpLogout, false},
		{CmdLoginRegister, OpRegister, true}, {CmdLoginRegisterWithPAT, OpRegister, true},
		{CmdLoginUser, OpReserved, false}, {CmdLoginWithPersonalAccessToken, OpReserved, false},
		{CmdSendMessages, OpSendMessages, false}, {CmdPollMessages, OpNonReplicated, false},
		{CmdStoreConsumerOffset, OpStoreConsumerOffset, true}, {CmdDeleteConsumerOffset, OpDeleteConsumerOffset, true},
		{CmdCreateStream, OpCreateStream, true}, {CmdPurgeTopic, OpPurgeTopic, true},
		{CmdCreatePartitions, OpCreatePartitions, true}, {CmdDeleteSegments, OpDeleteSegments, false},
		{CmdCreateConsumerGroup, OpCreateConsumerGroup, true}, {CmdLeaveConsumerGroup, OpLeaveConsumerGroup, true},
		{CmdSyncConsumerGroup, OpNonReplicated, false}, {CmdCreatePersonalAccessToken, OpCreatePersonalAccessToken, true},
		{Command(60000), OpReserved, false},
	}
	for _, c := range cases {
		if got := c.cmd.Operation(); got != c.op {
			t.Errorf("%v.Operation() = %v want %v", c.cmd, got, c.op)
		}
		if got := c.cmd.ReplyFramed(); got != c.framed {
			t.Errorf("%v.ReplyFramed() = %v", c.cmd, got)
		}
	}
	if len(commands) != 51 {
		t.Fatalf("command table has %d entries", len(commands))
	}
	for c, e := range commands {
		if e.op == OpReserved || e.op == OpNonReplicated {
			continue
		}
		got, ok := CommandFor(e.op, 0)
		if !ok || (got != c && e.op != OpRegister) {
			t.Errorf("CommandFor(%v) = %v, %v want %v", e.op, got, ok, c)
		}
	}
	if c, ok := CommandFor(OpNonReplicated, 606); !ok || c != CmdSyncConsumerGroup {
		t.Fatal("CommandFor NR")
	}
	if _, ok := CommandFor(OpNonReplicated, 60000); ok {
		t.Fatal("unknown NR code accepted")
	}
	// Operation framing per the contract: 64..68, 128..137, 139..149, 161, 162, 1.
	for o := 0; o < 256; o++ {
		op := Operation(o)
		want := o == 1 || (o >= 64 && o <= 68) || (o >= 128 && o <= 137) || (o >= 139 && o <= 149) || o == 161 || o == 162
		if op.ReplyFramed() != want {
			t.Errorf("Operation(%d).ReplyFramed() = %v", o, !want)
		}
	}
	if !OpCreateStream.Metadata() || OpDeleteSegments.Metadata() || !OpSendMessages.Partition() || !OpLogout.Replicated() || OpNonReplicated.Replicated() {
		t.Fatal("bands")
	}
}

func TestEvictionCodes(t *testing.T) {
	want := map[EvictionReason]Code{
		1: Unauthenticated, 2: InvalidCommand, 3: InvalidCommand, 4: InvalidCommand, 5: InvalidCommand,
		6: InvalidCommand, 7: Unauthenticated, 8: Unauthenticated, 9: InvalidCredentials,
		10: InvalidPersonalAccessToken, 11: Unauthenticated, 12: Unauthenticated, 13: StaleClient,
		14: IncompatibleProtocolVersion, 15: InvalidFormat, 16: InvalidCommand, 0: InvalidCommand,
	}
	for r, c := range want {
		if r.Code() != c {
			t.Errorf("reason %d -> %v want %v", r, r.Code(), c)
		}
	}
	if EvictMalformedLogin.String() != "MalformedLogin" || EvictionReason(99).String() != "EvictionReason(99)" {
		t.Fatal("names")
	}
}

func TestResultSection(t *testing.T) {
	ok := AppendResultOK(nil)
	if string(ok) != "\x00\x00\x00\x00" {
		t.Fatalf("ok section %x", ok)
	}
	p, err := StripResult(append(ok, 7, 8))
	if err != nil || string(p) != "\x07\x08" {
		t.Fatalf("strip ok: %x %v", p, err)
	}
	e := AppendResultError(nil, StreamNameAlreadyExists)
	if _, err := StripResult(e); !errors.Is(err, StreamNameAlreadyExists) {
		t.Fatalf("strip error: %v", err)
	}
	for _, bad := range [][]byte{nil, {1, 0, 0}, {2, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0}} {
		if _, err := StripResult(bad); !errors.Is(err, InvalidFormat) {
			t.Errorf("StripResult(%x) = %v", bad, err)
		}
	}
}
