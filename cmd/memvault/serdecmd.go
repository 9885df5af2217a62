package main

import (
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/memvault/memvault/serde"
)

func newSerdeCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{Use: "serde", Short: "Decode stored values (for debugging rows)"}
	var typ, hexData, b64Data string
	var thread, ns, channel, version, checkpoint, task string
	var idx int
	var itemNS, itemKey string
	decode := &cobra.Command{
		Use:   "decode --type TAG (--hex H | --base64 B)",
		Short: "Decode one stored blob to JSON, decrypting with the configured keys",
		Long: `decode turns one stored (type, blob) pair into JSON. Encrypted envelope values are
bound to the row they live in: give the row's coordinates —
--thread/--ns/--channel/--version for checkpoint_blobs,
--thread/--ns/--checkpoint/--task/--idx/--channel for checkpoint_writes,
--namespace/--key for store items. LangGraph "aes" values need none.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if typ == "" || (hexData == "") == (b64Data == "") {
				return usagef("decode needs --type and exactly one of --hex or --base64")
			}
			var data []byte
			var err error
			if hexData != "" {
				data, err = hex.DecodeString(hexData)
			} else {
				data, err = base64.StdEncoding.DecodeString(b64Data)
			}
			if err != nil {
				return usagef("payload: %v", err)
			}
			var aad []byte
			switch {
			case itemKey != "":
				aad = serde.AppendItemAAD(nil, itemNS, itemKey)
			case task != "":
				aad = serde.AppendWriteAAD(nil, thread, ns, checkpoint, task, idx, channel)
			case channel != "":
				aad = serde.AppendBlobAAD(nil, thread, ns, channel, version)
			}
			cfg, err := g.config()
			if err != nil {
				return err
			}
			// The operator hands over this one blob: an unbound "aes" blob
			// cannot have been moved here behind anyone's back, so it is
			// decoded (the row-binding refusal guards stored rows).
			cfg.DangerouslyAcceptUnboundAES = true
			s, err := cfg.Serializer()
			if err != nil {
				return err
			}
			v, err := serde.LoadsWith(s, typ, data, aad)
			if err != nil {
				return err
			}
			b, err := json.MarshalIndent(v, "", "  ")
			if err != nil {
				return fmt.Errorf("value decoded but has no JSON form: %w", err)
			}
			fmt.Fprintln(cmd.OutOrStdout(), string(b))
			return nil
		},
	}
	f := decode.Flags()
	f.StringVar(&typ, "type", "", "the row's type tag, e.g. json, msgpack, msgpack+aes, json+mvgcm")
	f.StringVar(&hexData, "hex", "", "the blob in hex (e.g. from psql's \\x output without \\x)")
	f.StringVar(&b64Data, "base64", "", "the blob in base64")
	f.StringVar(&thread, "thread", "", "thread id of the row")
	f.StringVar(&ns, "ns", "", "checkpoint namespace of the row")
	f.StringVar(&channel, "channel", "", "channel of a checkpoint_blobs or checkpoint_writes row")
	f.StringVar(&version, "version", "", "version of a checkpoint_blobs row")
	f.StringVar(&checkpoint, "checkpoint", "", "checkpoint id of a checkpoint_writes row")
	f.StringVar(&task, "task", "", "task id of a checkpoint_writes row")
	f.IntVar(&idx, "idx", 0, "idx of a checkpoint_writes row")
	f.StringVar(&itemNS, "namespace", "", "dotted namespace (prefix column) of a store row")
	f.StringVar(&itemKey, "key", "", "key of a store row")
	cmd.AddCommand(decode)
	return cmd
}
