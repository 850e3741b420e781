module example.com/hist

go 1.19
