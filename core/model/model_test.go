package model_test

import (
	"github.com/combpred/combpred/core/model"
	"github.com/combpred/combpred/core/prob"
	"github.com/combpred/combpred/core/ridge"
)

// Both fitted model kinds are Models.
var (
	_ model.Model = (*ridge.Model)(nil)
	_ model.Model = (*prob.Model)(nil)
)
