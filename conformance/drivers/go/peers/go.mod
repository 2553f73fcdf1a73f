module simclock.example/driver/peers

go 1.26

require (
	github.com/jonboulle/clockwork v0.5.0
	k8s.io/utils v0.0.0-20261023123148-ca04ba58ecab
	simclock.example/driver v0.0.0
)

replace simclock.example/driver => ../
