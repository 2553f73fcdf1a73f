"""Clock backends used to prove the conformance suite (SPEC §14).

``sorted_list`` is a second correct backend written independently of
``simclock.HeapSimClock``; ``broken`` holds backends that each differ from it
by one deliberate defect, and :data:`broken.BROKEN` says which clause each one
must fail.
"""
