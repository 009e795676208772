// A Hermes task submitter in Go, with the official NATS client: builds a structured-mode
// CloudEvent, derives the task id Hermes will give it (so it can follow the task before
// publishing), publishes it on the team's submit subject (a core request to the JetStream subject
// is answered with the stream's ack), and prints the task's events, one JSON line each, until the
// terminal one; the last line is {"task_id", "status", "result"}.
//
// Build offline with Debian's packages: GOPATH=/usr/share/gocode GO111MODULE=off go build .
//
// Environment: NATS_URL, HERMES_SUBJECT_PREFIX (default hermes), GOAL, USER_ID (default go-user).
package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"log"
	"os"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nuid"
)

const team = "default" // a team's own NATS account maps its bare submit subject to its team's

// taskIDFor is Hermes's taskIdFor for the default team: sha256(source NUL id), first 32 hex digits.
func taskIDFor(source, id string) string {
	sum := sha256.Sum256([]byte(source + "\x00" + id))
	return "t_" + hex.EncodeToString(sum[:])[:32]
}

func main() {
	prefix := env("HERMES_SUBJECT_PREFIX", "hermes")
	nc, err := nats.Connect(os.Getenv("NATS_URL"), nats.Name("go-submitter"))
	if err != nil {
		log.Fatalf("connect: %v", err)
	}
	defer nc.Drain()

	source := "https://go-submitter.example.test/team"
	id := nuid.Next()
	event := map[string]interface{}{
		"specversion":     "1.0",
		"type":            "io.hermes.task.submit",
		"source":          source,
		"id":              id,
		"datacontenttype": "application/json",
		"data":            map[string]interface{}{"user_id": env("USER_ID", "go-user"), "goal": os.Getenv("GOAL")},
	}
	taskID := taskIDFor(source, id)
	events, err := nc.SubscribeSync(prefix + ".tasks.events." + team + "." + taskID)
	if err != nil {
		log.Fatalf("subscribe: %v", err)
	}
	body, _ := json.Marshal(event)
	msg := nats.NewMsg(prefix + ".tasks.submit." + team)
	msg.Data = body
	msg.Header.Set("Nats-Msg-Id", taskID) // JetStream drops a retried publish within its duplicate window
	ack, err := nc.RequestMsg(msg, 10*time.Second)
	if err != nil {
		log.Fatalf("submit: %v", err)
	}
	fmt.Printf("{\"task_id\":%q,\"ack\":%s}\n", taskID, ack.Data)

	for {
		m, err := events.NextMsg(120 * time.Second)
		if err != nil {
			log.Fatalf("waiting for events of %s: %v", taskID, err)
		}
		fmt.Println(string(m.Data))
		var e struct {
			Type string          `json:"type"`
			Data json.RawMessage `json:"data"`
		}
		if err := json.Unmarshal(m.Data, &e); err != nil {
			log.Fatalf("event: %v", err)
		}
		kind := strings.TrimPrefix(e.Type, "io.hermes.task.")
		switch kind {
		case "rejected", "completed", "failed", "cancelled":
			out, _ := json.Marshal(map[string]interface{}{"task_id": taskID, "status": kind, "result": e.Data})
			fmt.Println(string(out))
			return
		}
	}
}

func env(name, fallback string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return fallback
}
