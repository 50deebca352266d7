package actors

import (
	"runtime"
	"sync"
)

// dispatcher runs the engine's mailbox turns on a fixed set of long-lived
// goroutines. protoactor's default dispatcher starts a goroutine for every
// turn; that goroutine starts with a small stack that every deeper handler
// grows again, and a job's life takes a dozen such turns across its actors.
// Engine handlers never block, so a small pool of goroutines that keep
// their stacks serves every engine actor.
type dispatcher struct {
	mu      sync.Mutex
	wake    *sync.Cond
	queue   []func()
	head    int
	closed  bool
	workers sync.WaitGroup
}

// dispatcherThroughput is how many messages a mailbox handles per turn
// before it lets other mailboxes run (protoactor's default).
const dispatcherThroughput = 300

func newDispatcher(workers int) *dispatcher {
	d := &dispatcher{}
	d.wake = sync.NewCond(&d.mu)
	d.workers.Add(workers)
	for range workers {
		go d.work()
	}
	return d
}

func defaultWorkers() int { return max(4, 2*runtime.GOMAXPROCS(0)) }

// Schedule implements actor.Dispatcher. It never blocks.
func (d *dispatcher) Schedule(fn func()) {
	d.mu.Lock()
	d.queue = append(d.queue, fn)
	d.mu.Unlock()
	d.wake.Signal()
}

// Throughput implements actor.Dispatcher.
func (d *dispatcher) Throughput() int { return dispatcherThroughput }

func (d *dispatcher) work() {
	defer d.workers.Done()
	for {
		fn, ok := d.next()
		if !ok {
			return
		}
		fn()
	}
}

// next waits for a turn to run; false once closed and drained.
func (d *dispatcher) next() (func(), bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for d.head == len(d.queue) {
		if d.closed {
			return nil, false
		}
		d.wake.Wait()
	}
	fn := d.queue[d.head]
	d.queue[d.head] = nil
	d.head++
	if d.head == len(d.queue) {
		d.queue, d.head = d.queue[:0], 0
	} else if d.head >= 1024 && 2*d.head >= len(d.queue) {
		n := copy(d.queue, d.queue[d.head:])
		clear(d.queue[n:])
		d.queue, d.head = d.queue[:n], 0
	}
	return fn, true
}

// close lets the workers finish the queued turns and stop, and waits.
func (d *dispatcher) close() {
	d.mu.Lock()
	d.closed = true
	d.mu.Unlock()
	d.wake.Broadcast()
	d.workers.Wait()
}
