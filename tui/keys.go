package tui

import "github.com/charmbracelet/bubbles/key"

// keyMap is the console's bindings; the footer and the ? page are built from it.
type keyMap struct {
	Up, Down, PageUp, PageDown, Top, Bottom key.Binding
	Tab, Enter, Back                        key.Binding
	Sort, Reverse, Filter                   key.Binding
	Drain, Undo, Move                       key.Binding
	Seek, UndoSeek                          key.Binding
	Topics, Transactions                    key.Binding
	Help, Quit                              key.Binding
}

func (k keyMap) ShortHelp() []key.Binding {
	return []key.Binding{k.Tab, k.Enter, k.Topics, k.Transactions, k.Drain, k.Undo, k.Filter, k.Help, k.Quit}
}

func (k keyMap) FullHelp() [][]key.Binding {
	return [][]key.Binding{
		{k.Up, k.Down, k.PageUp, k.PageDown, k.Top, k.Bottom},
		{k.Tab, k.Enter, k.Back, k.Sort, k.Reverse, k.Filter},
		{k.Drain, k.Undo, k.Move, k.Help, k.Quit},
		{k.Seek, k.UndoSeek},
		{k.Topics, k.Transactions},
	}
}

var keys = keyMap{
	Up:       key.NewBinding(key.WithKeys("up", "k"), key.WithHelp("↑/k", "up")),
	Down:     key.NewBinding(key.WithKeys("down", "j"), key.WithHelp("↓/j", "down")),
	PageUp:   key.NewBinding(key.WithKeys("pgup", "ctrl+b"), key.WithHelp("pgup", "page up")),
	PageDown: key.NewBinding(key.WithKeys("pgdown", "ctrl+f", " "), key.WithHelp("pgdn", "page down")),
	Top:      key.NewBinding(key.WithKeys("home", "g"), key.WithHelp("g", "first row")),
	Bottom:   key.NewBinding(key.WithKeys("end", "G"), key.WithHelp("G", "last row")),
	Tab:      key.NewBinding(key.WithKeys("tab", "shift+tab"), key.WithHelp("tab", "pane")),
	Enter:    key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "groups")),
	Back:     key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "back, clear filter")),
	Sort:     key.NewBinding(key.WithKeys("s"), key.WithHelp("s", "sort by next column")),
	Reverse:  key.NewBinding(key.WithKeys("S"), key.WithHelp("S", "reverse sort")),
	Filter:   key.NewBinding(key.WithKeys("/"), key.WithHelp("/", "filter")),
	Drain:    key.NewBinding(key.WithKeys("d"), key.WithHelp("d", "drain node")),
	Undo:     key.NewBinding(key.WithKeys("u"), key.WithHelp("u", "undo drain")),
	Move:     key.NewBinding(key.WithKeys("m"), key.WithHelp("m", "move partition (not offered)")),
	Seek:     key.NewBinding(key.WithKeys("o"), key.WithHelp("o", "on a group: move its offsets (seek)")),
	UndoSeek: key.NewBinding(key.WithKeys("U"), key.WithHelp("U", "on a group: undo its last seek")),
	Topics:   key.NewBinding(key.WithKeys("t"), key.WithHelp("t", "topics")),
	// x is the tail pane's hex key: T is free on every screen.
	Transactions: key.NewBinding(key.WithKeys("T"), key.WithHelp("T", "open transactions (! hanging); a aborts the selected one (plan, then y)")),
	Help:         key.NewBinding(key.WithKeys("?"), key.WithHelp("?", "help")),
	Quit:         key.NewBinding(key.WithKeys("q", "ctrl+c"), key.WithHelp("q", "quit")),
}

// moveRefused is what m answers: the lease decides each partition's owner, so one partition
// cannot be handed to a chosen node.
const moveRefused = "m: one partition cannot be moved: the lease (rendezvous hashing with bounded loads over the kafka-gateways members) decides each partition's owner; drain its owner (d on the nodes pane) to move all of that node's partitions"
