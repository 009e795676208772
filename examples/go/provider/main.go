// A Hermes tool provider in Go, written with the official NATS client and its micro package: the
// provider is a plain NATS service (answers $SRV.PING, $SRV.INFO, $SRV.STATS and $SRV.SCHEMA) whose
// endpoint is the provider's exec subject. It announces nothing: the toolbus finds it with $SRV.PING
// and $SRV.INFO and reads its tool specs from $SRV.SCHEMA, since this micro version (nats.go 1.22)
// has no endpoint metadata (docs/tools.md, "Providers as NATS micro services").
//
// Build offline with Debian's packages: GOPATH=/usr/share/gocode GO111MODULE=off go build .
//
// Environment: NATS_URL, HERMES_SUBJECT_PREFIX (default hermes), PROVIDER_NAME (default go-tools).
package main

import (
	"encoding/json"
	"log"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/micro"
)

// toolSpec is a Hermes ToolSpec (libs/contracts, schemas/tool-calls.ts).
type toolSpec struct {
	Name        string                 `json:"name"`
	Description string                 `json:"description"`
	Parameters  map[string]interface{} `json:"parameters"`
	TimeoutMs   int                    `json:"timeout_ms,omitempty"`
	Idempotent  bool                   `json:"idempotent,omitempty"`
}

// execRequest is a Hermes ToolExecRequest.
type execRequest struct {
	IdempotencyKey string          `json:"idempotency_key"`
	Tool           string          `json:"tool"`
	Arguments      json.RawMessage `json:"arguments"`
	Context        struct {
		TaskID string   `json:"task_id"`
		UserID string   `json:"user_id"`
		Roles  []string `json:"roles"`
	} `json:"context"`
}

// wireError is the error every Hermes reply carries: a code, whose fault it is (retryable), a message.
type wireError struct {
	Code      string `json:"code"`
	Message   string `json:"message"`
	Retryable bool   `json:"retryable"`
}

var tools = []toolSpec{{
	Name:        "reverse_text",
	Description: "Reverses a text, character by character.",
	Parameters: map[string]interface{}{
		"type":                 "object",
		"properties":           map[string]interface{}{"text": map[string]interface{}{"type": "string", "minLength": 1, "maxLength": 10000}},
		"required":             []string{"text"},
		"additionalProperties": false,
	},
	TimeoutMs:  5000,
	Idempotent: true,
}}

func reverse(s string) string {
	r := []rune(s)
	for i, j := 0, len(r)-1; i < j; i, j = i+1, j-1 {
		r[i], r[j] = r[j], r[i]
	}
	return string(r)
}

// run executes one tool call; the toolbus has validated the arguments against the spec already.
func run(req execRequest) (interface{}, *wireError) {
	switch req.Tool {
	case "reverse_text":
		var args struct {
			Text string `json:"text"`
		}
		if err := json.Unmarshal(req.Arguments, &args); err != nil {
			return nil, &wireError{Code: "invalid_arguments", Message: err.Error(), Retryable: false}
		}
		return map[string]string{"reversed": reverse(args.Text)}, nil
	}
	return nil, &wireError{Code: "tool_not_found", Message: "this provider has no tool " + req.Tool, Retryable: false}
}

func respond(r *micro.Request, body interface{}) {
	out, _ := json.Marshal(body)
	if err := r.Respond(out); err != nil {
		log.Printf("reply failed: %v", err)
	}
}

func main() {
	prefix := env("HERMES_SUBJECT_PREFIX", "hermes")
	provider := env("PROVIDER_NAME", "go-tools")
	nc, err := nats.Connect(os.Getenv("NATS_URL"), nats.Name(provider))
	if err != nil {
		log.Fatalf("connect: %v", err)
	}
	defer nc.Drain()

	specs, _ := json.Marshal(tools)
	svc, err := micro.AddService(nc, micro.Config{
		Name:        provider,
		Version:     "1.0.0",
		Description: "Hermes tool provider in Go",
		// The tool specs ($SRV.SCHEMA): where the toolbus reads them from a micro service without endpoint metadata.
		Schema: micro.Schema{Request: string(specs)},
		Endpoint: micro.Endpoint{
			Subject: prefix + ".tools.exec." + provider,
			Handler: func(r *micro.Request) {
				var req execRequest
				if err := json.Unmarshal(r.Data(), &req); err != nil {
					// Bad input is answered with a structured error, never a crash.
					respond(r, map[string]interface{}{"ok": false, "error": wireError{Code: "invalid_payload", Message: err.Error()}})
					return
				}
				result, werr := run(req)
				if werr != nil {
					respond(r, map[string]interface{}{"ok": false, "error": werr})
					return
				}
				respond(r, map[string]interface{}{"ok": true, "result": map[string]interface{}{"result": result}})
			},
		},
	})
	if err != nil {
		log.Fatalf("add service: %v", err)
	}
	defer svc.Stop()

	if err := nc.Flush(); err != nil {
		log.Fatalf("flush: %v", err)
	}
	log.Printf("go provider ready: %s (%s)", provider, strings.Join(names(), ", "))

	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, syscall.SIGINT)
	<-stop
}

func names() []string {
	out := make([]string, 0, len(tools))
	for _, t := range tools {
		out = append(out, t.Name)
	}
	return out
}

func env(name, fallback string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return fallback
}
