module simclock.example/driver

go 1.21
