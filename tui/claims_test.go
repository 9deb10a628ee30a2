package tui_test

import (
	"bytes"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/exp/teatest"
	"github.com/muesli/termenv"

	"github.com/iggy-kafka/iggy-kafka/inspect"
	"github.com/iggy-kafka/iggy-kafka/internal/output/golden"
	"github.com/iggy-kafka/iggy-kafka/tui"
)

func init() { lipgloss.SetColorProfile(termenv.Ascii) }

var base = time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)

func fixedNow() time.Time { return base.Add(time.Minute) }

func i32(n int32) *int32 { return &n }

// rows is a fleet of three nodes over 16 partitions, partition 5 unowned, partition 9 in
// disagreement with Iggy's assignment.
func rows() []inspect.ClaimRow {
	var out []inspect.ClaimRow
	for p := range 16 {
		r := inspect.ClaimRow{Partition: p, Controller: p == 0, LogEndOffset: uint64(100 + p), Groups: p % 4, Flags: []string{}}
		if p == 5 {
			r.Flags = []string{inspect.FlagUnowned}
		} else {
			node := int32(1 + p%3)
			at := base.Add(time.Duration(p) * time.Second)
			r.OwnerNode, r.OwnerAddr, r.Claim, r.ClaimedAt = &node, "localhost:909"+string(rune('1'+p%3)), uint64(1+p), &at
		}
		if p == 9 {
			r.Flags = []string{inspect.FlagAssignmentDiffers}
		}
		out = append(out, r)
	}
	return out
}

// handoverUpdate moves partition 2 from node 3 to node 1.
func handoverUpdate() tui.UpdateMsg {
	rs := rows()
	at := base.Add(50 * time.Second)
	rs[2].OwnerNode, rs[2].OwnerAddr, rs[2].Claim, rs[2].ClaimedAt = i32(1), "localhost:9091", 17, &at
	held, gap := 48.0, 0.12
	return tui.UpdateMsg{
		Rows:      rs,
		Handovers: []inspect.Handover{{Partition: 2, Claim: 17, From: i32(3), To: 1, Addr: "localhost:9091", At: at, HeldSeconds: &held, GapSeconds: &gap}},
		Changes:   []inspect.Change{{Time: at, Partition: 2, Field: "owner", Old: "3", New: "1"}},
	}
}

func update(m tea.Model, msgs ...tea.Msg) tea.Model {
	for _, msg := range msgs {
		m, _ = m.Update(msg)
	}
	return m
}

func keyMsg(s string) tea.KeyMsg {
	switch s {
	case "enter":
		return tea.KeyMsg{Type: tea.KeyEnter}
	case "esc":
		return tea.KeyMsg{Type: tea.KeyEsc}
	}
	return tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune(s)}
}

func checkSize(t *testing.T, view string, w, h int) {
	t.Helper()
	lines := strings.Split(view, "\n")
	if len(lines) != h {
		t.Errorf("%d lines, want %d", len(lines), h)
	}
	for i, l := range lines {
		if n := lipgloss.Width(l); n > w {
			t.Errorf("line %d is %d columns wide: %q", i, n, l)
		}
	}
}

func TestClaimsViewGolden(t *testing.T) {
	size := tea.WindowSizeMsg{Width: 80, Height: 24}
	cases := []struct {
		name string
		msgs []tea.Msg
	}{
		{"start", nil},
		{"handover", []tea.Msg{handoverUpdate()}},
		{"help", []tea.Msg{handoverUpdate(), keyMsg("?")}},
		{"filter", []tea.Msg{keyMsg("/"), keyMsg("n"), keyMsg("o"), keyMsg("d"), keyMsg("e"), keyMsg(" "), keyMsg("2"), keyMsg("enter")}},
		{"unowned-filter", []tea.Msg{keyMsg("/"), keyMsg("u"), keyMsg("n"), keyMsg("o")}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := update(tui.NewClaims(rows(), fixedNow), append([]tea.Msg{size}, c.msgs...)...)
			v := m.View()
			checkSize(t, v, 80, 24)
			golden.Assert(t, "ClaimsView_"+c.name, []byte(v))
		})
	}
}

// The view keeps to smaller terminals too: rows give way, the pane and footer stay.
func TestClaimsViewSmallTerminal(t *testing.T) {
	m := update(tui.NewClaims(rows(), fixedNow), tea.WindowSizeMsg{Width: 60, Height: 12}, handoverUpdate())
	v := m.View()
	checkSize(t, v, 60, 12)
	if !strings.Contains(v, "recent handovers") || !strings.Contains(v, "q quit") {
		t.Fatalf("view lost its pane or footer:\n%s", v)
	}
}

func TestClaimsFilterKeepsMatchingRows(t *testing.T) {
	m := update(tui.NewClaims(rows(), fixedNow), keyMsg("/"), keyMsg("n"), keyMsg("o"), keyMsg("d"), keyMsg("e"), keyMsg(" "), keyMsg("2"), keyMsg("enter")).(tui.Claims)
	vis := m.Visible()
	if m.Filter() != "node 2" || len(vis) != 5 {
		t.Fatalf("filter %q kept %d rows", m.Filter(), len(vis))
	}
	for _, r := range vis {
		if *r.OwnerNode != 2 {
			t.Fatalf("row %+v kept by filter node 2", r)
		}
	}
	m = update(m, keyMsg("esc")).(tui.Claims)
	if m.Filter() != "" || len(m.Visible()) != 16 {
		t.Fatalf("esc left filter %q", m.Filter())
	}
}

// Key handling through a real program: the handover appears when its update arrives, ? shows
// the help, / filters, q quits.
func TestClaimsKeysTeatest(t *testing.T) {
	tm := teatest.NewTestModel(t, tui.NewClaims(rows(), fixedNow), teatest.WithInitialTermSize(80, 24))
	tm.Send(handoverUpdate())
	teatest.WaitFor(t, tm.Output(), func(b []byte) bool {
		return bytes.Contains(b, []byte("node 3 -> node 1 (claim 17)"))
	}, teatest.WithDuration(5*time.Second), teatest.WithCheckInterval(5*time.Millisecond))
	tm.Send(keyMsg("?"))
	teatest.WaitFor(t, tm.Output(), func(b []byte) bool {
		return bytes.Contains(b, []byte("clear filter"))
	}, teatest.WithDuration(5*time.Second), teatest.WithCheckInterval(5*time.Millisecond))
	for _, k := range []string{"/", "u", "n", "o", "enter"} {
		tm.Send(keyMsg(k))
	}
	tm.Send(keyMsg("q"))
	tm.WaitFinished(t, teatest.WithFinalTimeout(5*time.Second))
	final := tm.FinalModel(t).(tui.Claims)
	if final.Filter() != "uno" || len(final.Visible()) != 1 || final.Visible()[0].Partition != 5 {
		t.Fatalf("final filter %q rows %+v", final.Filter(), final.Visible())
	}
}
