module github.com/scoll/scoll

go 1.26
