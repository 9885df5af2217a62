package langchaingo

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/tmc/langchaingo/llms"
	"github.com/tmc/langchaingo/schema"

	"github.com/memvault/memvault/store"
)

// HistoryOptions configures a ChatMessageHistory. The zero value is usable.
type HistoryOptions struct {
	// Namespace holds the conversations; nil means {"langchaingo", "chat"}.
	Namespace store.Namespace
}

// ChatMessageHistory is one conversation's messages in a memvault store:
// one item (one ciphertext with an encrypting store) under the session id,
// every message kept with its exact LangChainGo type and fields. Appends
// are compare-and-set updates of the item, retried on conflict, so
// concurrent writers to one conversation lose no message
// (store.Update). It is safe for
// concurrent use.
type ChatMessageHistory struct {
	st  store.Store
	ns  store.Namespace
	key string
}

var _ schema.ChatMessageHistory = (*ChatMessageHistory)(nil)

// NewChatMessageHistory returns the history of conversation sessionID in
// st, which must be a store.ConditionalPutter (every memvault store is).
func NewChatMessageHistory(st store.Store, sessionID string, opts HistoryOptions) (*ChatMessageHistory, error) {
	if _, ok := st.(store.ConditionalPutter); !ok {
		return nil, fmt.Errorf("langchaingo: store %T has no conditional put", st)
	}
	ns := opts.Namespace
	if ns == nil {
		ns = store.Namespace{"langchaingo", "chat"}
	}
	if err := ns.Validate(); err != nil {
		return nil, fmt.Errorf("langchaingo: %w", err)
	}
	if err := store.ValidateKey(sessionID); err != nil {
		return nil, fmt.Errorf("langchaingo: session id: %w", err)
	}
	return &ChatMessageHistory{st: st, ns: ns, key: sessionID}, nil
}

// stored is one message as kept: its type and its struct as JSON.
type stored struct {
	Type llms.ChatMessageType `json:"type"`
	Msg  json.RawMessage      `json:"msg"`
}

func encodeMessage(m llms.ChatMessage) (stored, error) {
	if m == nil {
		return stored{}, errors.New("langchaingo: nil message")
	}
	switch m.(type) {
	case llms.AIChatMessage, llms.HumanChatMessage, llms.SystemChatMessage, llms.GenericChatMessage, llms.FunctionChatMessage, llms.ToolChatMessage:
	default:
		// A type of the caller's own keeps its type, role and content.
		m = llms.GenericChatMessage{Role: string(m.GetType()), Content: m.GetContent()}
	}
	var v any = m
	if ai, ok := m.(llms.AIChatMessage); ok {
		v = aiFrom(ai)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return stored{}, fmt.Errorf("langchaingo: encode message: %w", err)
	}
	typ := m.GetType()
	if _, generic := m.(llms.GenericChatMessage); generic {
		typ = llms.ChatMessageTypeGeneric
	}
	return stored{Type: typ, Msg: b}, nil
}

func decodeMessage(s stored) (llms.ChatMessage, error) {
	var m llms.ChatMessage
	var err error
	switch s.Type {
	case llms.ChatMessageTypeAI:
		var ai aiMessage
		err = json.Unmarshal(s.Msg, &ai)
		m = ai.message()
	case llms.ChatMessageTypeHuman:
		m, err = decodeAs[llms.HumanChatMessage](s.Msg)
	case llms.ChatMessageTypeSystem:
		m, err = decodeAs[llms.SystemChatMessage](s.Msg)
	case llms.ChatMessageTypeGeneric:
		m, err = decodeAs[llms.GenericChatMessage](s.Msg)
	case llms.ChatMessageTypeFunction:
		m, err = decodeAs[llms.FunctionChatMessage](s.Msg)
	case llms.ChatMessageTypeTool:
		m, err = decodeAs[llms.ToolChatMessage](s.Msg)
	default:
		return nil, fmt.Errorf("langchaingo: stored message of unknown type %q", s.Type)
	}
	if err != nil {
		return nil, fmt.Errorf("langchaingo: malformed stored message: %w", err)
	}
	return m, nil
}

func decodeAs[T llms.ChatMessage](raw []byte) (llms.ChatMessage, error) {
	var x T
	err := json.Unmarshal(raw, &x)
	return x, err
}

// decodeHistory returns the messages stored in an item (none for nil).
func decodeHistory(it *store.Item) ([]stored, error) {
	if it == nil {
		return nil, nil
	}
	raw, _ := it.Value["messages"].([]byte)
	var msgs []stored
	if err := json.Unmarshal(raw, &msgs); err != nil {
		return nil, fmt.Errorf("langchaingo: malformed history: %w", err)
	}
	return msgs, nil
}

// update applies change to the stored messages: a compare-and-set update
// retried until it lands (store.Update).
func (h *ChatMessageHistory) update(ctx context.Context, change func([]stored) []stored) error {
	err := store.Update(ctx, h.st, h.ns, h.key, func(it *store.Item) (map[string]any, error) {
		msgs, err := decodeHistory(it)
		if err != nil {
			return nil, err
		}
		b, err := json.Marshal(change(msgs))
		if err != nil {
			return nil, fmt.Errorf("langchaingo: encode history: %w", err)
		}
		return map[string]any{"messages": b}, nil
	}, store.WithoutIndex()) // a conversation is read whole, never searched: no vectors of it
	if err != nil {
		return fmt.Errorf("langchaingo: write history: %w", err)
	}
	return nil
}

// AddMessage implements schema.ChatMessageHistory.
func (h *ChatMessageHistory) AddMessage(ctx context.Context, message llms.ChatMessage) error {
	s, err := encodeMessage(message)
	if err != nil {
		return err
	}
	return h.update(ctx, func(msgs []stored) []stored { return append(msgs, s) })
}

// AddUserMessage implements schema.ChatMessageHistory.
func (h *ChatMessageHistory) AddUserMessage(ctx context.Context, message string) error {
	return h.AddMessage(ctx, llms.HumanChatMessage{Content: message})
}

// AddAIMessage implements schema.ChatMessageHistory.
func (h *ChatMessageHistory) AddAIMessage(ctx context.Context, message string) error {
	return h.AddMessage(ctx, llms.AIChatMessage{Content: message})
}

// Clear implements schema.ChatMessageHistory: the conversation's item goes.
func (h *ChatMessageHistory) Clear(ctx context.Context) error {
	if err := h.st.Delete(ctx, h.ns, h.key); err != nil {
		return fmt.Errorf("langchaingo: clear history: %w", err)
	}
	return nil
}

// Messages implements schema.ChatMessageHistory.
func (h *ChatMessageHistory) Messages(ctx context.Context) ([]llms.ChatMessage, error) {
	it, err := h.st.Get(ctx, h.ns, h.key)
	if err != nil {
		return nil, fmt.Errorf("langchaingo: read history: %w", err)
	}
	msgs, err := decodeHistory(it)
	if err != nil {
		return nil, err
	}
	out := make([]llms.ChatMessage, 0, len(msgs))
	for _, s := range msgs {
		m, err := decodeMessage(s)
		if err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	return out, nil
}

// SetMessages implements schema.ChatMessageHistory: the conversation's
// messages become messages.
func (h *ChatMessageHistory) SetMessages(ctx context.Context, messages []llms.ChatMessage) error {
	enc := make([]stored, len(messages))
	for i, m := range messages {
		var err error
		if enc[i], err = encodeMessage(m); err != nil {
			return err
		}
	}
	return h.update(ctx, func([]stored) []stored { return enc })
}

// aiMessage is an llms.AIChatMessage as stored. LangChainGo's own JSON for
// a ToolCall does not read back what it writes (the function's name and
// arguments are lost), so tool calls are kept in a form of the adapter's.
type aiMessage struct {
	Content          string             `json:"content,omitempty"`
	FunctionCall     *llms.FunctionCall `json:"function_call,omitempty"`
	ToolCalls        []toolCall         `json:"tool_calls,omitempty"`
	ReasoningContent string             `json:"reasoning_content,omitempty"`
}

type toolCall struct {
	ID           string             `json:"id"`
	Type         string             `json:"type"`
	FunctionCall *llms.FunctionCall `json:"function,omitempty"`
}

func aiFrom(m llms.AIChatMessage) aiMessage {
	a := aiMessage{Content: m.Content, FunctionCall: m.FunctionCall, ReasoningContent: m.ReasoningContent}
	for _, tc := range m.ToolCalls {
		a.ToolCalls = append(a.ToolCalls, toolCall(tc))
	}
	return a
}

func (a aiMessage) message() llms.AIChatMessage {
	m := llms.AIChatMessage{Content: a.Content, FunctionCall: a.FunctionCall, ReasoningContent: a.ReasoningContent}
	for _, tc := range a.ToolCalls {
		m.ToolCalls = append(m.ToolCalls, llms.ToolCall(tc))
	}
	return m
}
