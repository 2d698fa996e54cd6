module github.com/combpred/combpred

go 1.24.0

require gonum.org/v1/gonum v0.17.0

require golang.org/x/sys v0.38.0
