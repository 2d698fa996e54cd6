package space

import "slices"

// MoveKind names a family of local moves between the structures of a space, which the
// probabilistic model's local-move chains implement (package prob).
type MoveKind int

// The move families.
const (
	// MovesCube flips one coordinate of a 0/1 row, keeping it a structure (labels; the nodes of
	// a rooted subtree whose flip keeps it closed under parents).
	MovesCube MoveKind = iota + 1
	// MovesTransposition swaps two labels adjacent in a ranking.
	MovesTransposition
	// MovesCycle inserts, removes or moves a vertex of an undirected cycle, or reverses a
	// segment (2-opt).
	MovesCycle
	// MovesDirectedCycle are the same moves on a directed cycle, whose arcs keep their direction.
	MovesDirectedCycle
)

// Local is implemented by spaces whose structures a local-move chain walks: it says which moves.
type Local interface {
	LocalMoves() MoveKind
}

// Rooted is implemented by the spaces over a rooted tree: the parent of every node, −1 at the root.
type Rooted interface {
	Parent() []int
}

// LocalMoves: flip one label.
func (s *Multilabel) LocalMoves() MoveKind { return MovesCube }

// LocalMoves: flip one node, keeping the subtree closed under parents.
func (s *Subtrees) LocalMoves() MoveKind { return MovesCube }

// Parent returns the tree's parent array (a copy).
func (s *Subtrees) Parent() []int { return slices.Clone(s.t.parent) }

// LocalMoves: swap two adjacent labels.
func (s *Permutations) LocalMoves() MoveKind { return MovesTransposition }

// LocalMoves: vertex moves and 2-opt, arcs oriented.
func (s *DirectedCycles) LocalMoves() MoveKind { return MovesDirectedCycle }

// LocalMoves: vertex moves and 2-opt.
func (s *UndirectedCycles) LocalMoves() MoveKind { return MovesCycle }

// Canonical is implemented by spaces in which a structure has several encodings (an undirected
// cycle in either orientation): Canonicalize rewrites y into the one Sample and Decode write.
type Canonical interface {
	Canonicalize(y []int64)
}
