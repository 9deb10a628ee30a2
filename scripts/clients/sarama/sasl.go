package main

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/sha512"
	"fmt"
	"hash"
	"time"

	"github.com/IBM/sarama"
	"github.com/xdg-go/scram"
)

// saslRun checks SASL against a gateway started with --sasl, as Iggy's root user iggy
// (password iggy): over PLAIN it sets the user's own SCRAM-SHA-256 and SCRAM-SHA-512
// credentials (password iggy) with UpsertUserScramCredentials, then with each of PLAIN,
// SCRAM-SHA-256 and SCRAM-SHA-512 it produces one record to partition 0 of topic
// TOPIC-MECHANISM and consumes it back. The SCRAM client is xdg-go/scram, as sarama's own
// example uses.
func (r *run) saslRun() {
	r.label = "sarama " + r.version.String() + " SASL"
	if !r.version.IsAtLeast(sarama.V2_7_0_0) {
		// Before Kafka 1.0 there is no SaslAuthenticate: sarama sends a SaslHandshake v0 and
		// then the mechanism's bare tokens. AlterUserScramCredentials is Kafka 2.7's, so the
		// credentials are those a run at a later level set.
		for _, mech := range []sarama.SASLMechanism{sarama.SASLTypePlaintext, sarama.SASLTypeSCRAMSHA256, sarama.SASLTypeSCRAMSHA512} {
			r.saslRoundTrip(mech)
		}
		return
	}
	admin, err := sarama.NewClusterAdmin([]string{r.broker}, r.saslConfig(sarama.SASLTypePlaintext))
	if err != nil {
		r.fail("admin client over PLAIN: %v", err)
		return
	}
	defer admin.Close()
	var upserts []sarama.AlterUserScramCredentialsUpsert
	for _, m := range []sarama.ScramMechanismType{sarama.SCRAM_MECHANISM_SHA_256, sarama.SCRAM_MECHANISM_SHA_512} {
		salt := make([]byte, 16)
		rand.Read(salt)
		upserts = append(upserts, sarama.AlterUserScramCredentialsUpsert{Name: "iggy", Mechanism: m, Iterations: 4096, Salt: salt, Password: []byte("iggy")})
	}
	res, err := admin.UpsertUserScramCredentials(upserts)
	if err != nil {
		r.fail("UpsertUserScramCredentials: %v", err)
		return
	}
	for _, x := range res {
		if x.ErrorCode != sarama.ErrNoError {
			r.fail("UpsertUserScramCredentials for %s: %v", x.User, x.ErrorCode)
			return
		}
	}
	r.pass("UpsertUserScramCredentials over PLAIN set SCRAM-SHA-256 and SCRAM-SHA-512 for iggy")

	for _, mech := range []sarama.SASLMechanism{sarama.SASLTypePlaintext, sarama.SASLTypeSCRAMSHA256, sarama.SASLTypeSCRAMSHA512} {
		r.saslRoundTrip(mech)
	}
}

// saslRoundTrip produces one record with mech and consumes it back with mech.
func (r *run) saslRoundTrip(mech sarama.SASLMechanism) {
	topic := r.topic + "-" + string(mech)
	value := "v-" + string(mech)
	p, err := sarama.NewSyncProducer([]string{r.broker}, r.saslConfig(mech))
	if err != nil {
		r.fail("%s: producer: %v", mech, err)
		return
	}
	_, _, err = p.SendMessage(&sarama.ProducerMessage{Topic: topic, Partition: 0, Key: sarama.StringEncoder("k"), Value: sarama.StringEncoder(value)})
	p.Close()
	if err != nil {
		r.fail("%s: produce: %v", mech, err)
		return
	}
	c, err := sarama.NewConsumer([]string{r.broker}, r.saslConfig(mech))
	if err != nil {
		r.fail("%s: consumer: %v", mech, err)
		return
	}
	defer c.Close()
	pc, err := c.ConsumePartition(topic, 0, sarama.OffsetOldest)
	if err != nil {
		r.fail("%s: consume partition 0: %v", mech, err)
		return
	}
	defer pc.Close()
	select {
	case msg := <-pc.Messages():
		if msg.Offset != 0 || string(msg.Key) != "k" || string(msg.Value) != value {
			r.fail("%s: consumed offset %d %s=%s, want offset 0 k=%s", mech, msg.Offset, msg.Key, msg.Value, value)
			return
		}
		r.pass("%s: produced and consumed k=%s", mech, value)
	case err := <-pc.Errors():
		r.fail("%s: consume: %v", mech, err)
	case <-time.After(10 * time.Second):
		r.fail("%s: consumed nothing within 10 s", mech)
	}
}

func (r *run) saslConfig(mech sarama.SASLMechanism) *sarama.Config {
	c := r.config(r.version)
	c.Net.SASL.Enable = true
	c.Net.SASL.Mechanism = mech
	c.Net.SASL.User, c.Net.SASL.Password = "iggy", "iggy"
	if !r.version.IsAtLeast(sarama.V1_0_0_0) {
		c.Net.SASL.Version = sarama.SASLHandshakeV0
		c.ApiVersionsRequest = false
	}
	switch mech {
	case sarama.SASLTypeSCRAMSHA256:
		c.Net.SASL.SCRAMClientGeneratorFunc = func() sarama.SCRAMClient { return &scramClient{hash: sha256.New} }
	case sarama.SASLTypeSCRAMSHA512:
		c.Net.SASL.SCRAMClientGeneratorFunc = func() sarama.SCRAMClient { return &scramClient{hash: sha512.New} }
	}
	return c
}

// scramClient is sarama.SCRAMClient over xdg-go/scram.
type scramClient struct {
	hash func() hash.Hash
	conv *scram.ClientConversation
}

func (s *scramClient) Begin(user, password, authzID string) error {
	cl, err := scram.HashGeneratorFcn(s.hash).NewClient(user, password, authzID)
	if err != nil {
		return fmt.Errorf("scram client: %w", err)
	}
	s.conv = cl.NewConversation()
	return nil
}

func (s *scramClient) Step(challenge string) (string, error) { return s.conv.Step(challenge) }

func (s *scramClient) Done() bool { return s.conv.Done() }
