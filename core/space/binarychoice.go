package space

// BinaryChoice is implemented by spaces that can be one choice between two classes (Multiclass).
// Such a space scores each class with its own weights, w₀ = −w₁ at a penalised optimum, so the
// log-odds' weights w₁ − w₀ pay half of λ‖W‖², where scikit-learn's binary logistic regression
// keeps one weight vector and pays all of it: package prob doubles its default λ there.
type BinaryChoice interface {
	// BinaryChoice reports whether this instance is a choice between two classes.
	BinaryChoice() bool
}

// IsBinaryChoice reports whether sp is a choice between two classes.
func IsBinaryChoice(sp Space) bool {
	b, ok := sp.(BinaryChoice)
	return ok && b.BinaryChoice()
}
