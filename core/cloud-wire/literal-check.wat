;; The SIMD form of the cloud's literal check (core/cloud-wire/literal-check.ts):
;; is the text in memory exactly the inside of one JSON string literal?
;;
;; The caller copies the bytes between the two quotes to address 0 and pads
;; them with at least one 'z' (not special, not an escape letter, not a hex
;; digit) to a multiple of 64; validate($n = that padded length) returns 1 if
;; the text is valid, else 0. Each round of the loop takes one 64-byte block as
;; four 128-bit vectors and makes 64-bit masks of it (bit i = byte i):
;;   - a control character (below 0x20) anywhere fails;
;;   - which characters are escaped, by the carry-less method of simdjson
;;     (Langdale and Lemire, "Parsing gigabytes of JSON per second", 2019): a
;;     run of backslashes escapes the character after it when the run is odd;
;;   - a quote that is not escaped fails (the closing quote is not in memory);
;;   - an escaped character must be one of " \ / b f n r t u;
;;   - each \u is followed by four hex digits, some maybe in the next block.
;; $prev and $need carry what a block asks of the next one: its first byte is
;; escaped, or some of its first bytes must be hex digits. At the end both
;; must be zero.
;;
;; This text is the source: after changing it, run
;;   npx vitest run test/cloud/literal-check-wat.test.ts
;; which assembles it (wabt) and, when the bytes differ from WASM_BASE64 in
;; literal-check.ts, prints the new value to put there.
(module
  (func (export "validate") (param $n i32) (result i32)
    (local $p i32)
    (local $prev i64) (local $need i64) (local $b i64) (local $q i64) (local $e i64)
    (local $u i64) (local $h i64) (local $t i64) (local $esc i64)
    (local $x0 v128) (local $x1 v128) (local $x2 v128) (local $x3 v128) (local $y v128)
    block $fail
      loop $block
        ;; The end of the text: what a \u or a backslash of the last block asked of the next one must be nothing.
        local.get $p local.get $n i32.ge_u
        if
          local.get $need local.get $prev i64.or i64.eqz
          return
        end
        local.get $p v128.load align=1 local.set $x0
        local.get $p v128.load offset=16 align=1 local.set $x1
        local.get $p v128.load offset=32 align=1 local.set $x2
        local.get $p v128.load offset=48 align=1 local.set $x3

        ;; A control character anywhere fails.
        local.get $x0 i32.const 0x20 i8x16.splat i8x16.lt_u
        local.get $x1 i32.const 0x20 i8x16.splat i8x16.lt_u v128.or
        local.get $x2 i32.const 0x20 i8x16.splat i8x16.lt_u v128.or
        local.get $x3 i32.const 0x20 i8x16.splat i8x16.lt_u v128.or
        v128.any_true
        br_if $fail

        ;; $b: backslashes. Each vector's 16 lanes become 16 bits, shifted into place.
        local.get $x0 i32.const 0x5c i8x16.splat i8x16.eq i8x16.bitmask i64.extend_i32_u
        local.get $x1 i32.const 0x5c i8x16.splat i8x16.eq i8x16.bitmask i64.extend_i32_u i64.const 16 i64.shl i64.or
        local.get $x2 i32.const 0x5c i8x16.splat i8x16.eq i8x16.bitmask i64.extend_i32_u i64.const 32 i64.shl i64.or
        local.get $x3 i32.const 0x5c i8x16.splat i8x16.eq i8x16.bitmask i64.extend_i32_u i64.const 48 i64.shl i64.or
        local.set $b
        ;; $q: quotes.
        local.get $x0 i32.const 0x22 i8x16.splat i8x16.eq i8x16.bitmask i64.extend_i32_u
        local.get $x1 i32.const 0x22 i8x16.splat i8x16.eq i8x16.bitmask i64.extend_i32_u i64.const 16 i64.shl i64.or
        local.get $x2 i32.const 0x22 i8x16.splat i8x16.eq i8x16.bitmask i64.extend_i32_u i64.const 32 i64.shl i64.or
        local.get $x3 i32.const 0x22 i8x16.splat i8x16.eq i8x16.bitmask i64.extend_i32_u i64.const 48 i64.shl i64.or
        local.set $q

        ;; Escaped characters (simdjson): $t = backslashes that are not themselves escaped;
        ;; $e = the bytes escaped by an odd run of them.
        local.get $b local.get $prev i64.const -1 i64.xor i64.and local.set $t
        local.get $t i64.const 1 i64.shl i64.const 0xaaaaaaaaaaaaaaaa i64.or local.get $t i64.sub
        i64.const 0xaaaaaaaaaaaaaaaa i64.xor local.set $e
        local.get $e local.get $b i64.and local.set $esc
        local.get $e local.get $b local.get $prev i64.or i64.xor local.set $e
        ;; A run that reaches the block's last byte escapes the next block's first.
        local.get $esc i64.const 63 i64.shr_u local.set $prev

        ;; A quote that is not escaped fails.
        local.get $q local.get $e i64.const -1 i64.xor i64.and i64.const 0 i64.ne
        br_if $fail

        i64.const 0 local.set $u
        local.get $e i64.eqz i32.eqz
        if
          ;; An escaped character must be one of " \ / b f n r t u.
          local.get $e
          local.get $x0 i32.const 0x22 i8x16.splat i8x16.eq
          local.get $x0 i32.const 0x5c i8x16.splat i8x16.eq v128.or
          local.get $x0 i32.const 0x2f i8x16.splat i8x16.eq v128.or
          local.get $x0 i32.const 0x62 i8x16.splat i8x16.eq v128.or
          local.get $x0 i32.const 0x66 i8x16.splat i8x16.eq v128.or
          local.get $x0 i32.const 0x6e i8x16.splat i8x16.eq v128.or
          local.get $x0 i32.const 0x72 i8x16.splat i8x16.eq v128.or
          local.get $x0 i32.const 0x74 i8x16.splat i8x16.eq v128.or
          local.get $x0 i32.const 0x75 i8x16.splat i8x16.eq v128.or
          i8x16.bitmask i64.extend_i32_u
          local.get $x1 i32.const 0x22 i8x16.splat i8x16.eq
          local.get $x1 i32.const 0x5c i8x16.splat i8x16.eq v128.or
          local.get $x1 i32.const 0x2f i8x16.splat i8x16.eq v128.or
          local.get $x1 i32.const 0x62 i8x16.splat i8x16.eq v128.or
          local.get $x1 i32.const 0x66 i8x16.splat i8x16.eq v128.or
          local.get $x1 i32.const 0x6e i8x16.splat i8x16.eq v128.or
          local.get $x1 i32.const 0x72 i8x16.splat i8x16.eq v128.or
          local.get $x1 i32.const 0x74 i8x16.splat i8x16.eq v128.or
          local.get $x1 i32.const 0x75 i8x16.splat i8x16.eq v128.or
          i8x16.bitmask i64.extend_i32_u i64.const 16 i64.shl i64.or
          local.get $x2 i32.const 0x22 i8x16.splat i8x16.eq
          local.get $x2 i32.const 0x5c i8x16.splat i8x16.eq v128.or
          local.get $x2 i32.const 0x2f i8x16.splat i8x16.eq v128.or
          local.get $x2 i32.const 0x62 i8x16.splat i8x16.eq v128.or
          local.get $x2 i32.const 0x66 i8x16.splat i8x16.eq v128.or
          local.get $x2 i32.const 0x6e i8x16.splat i8x16.eq v128.or
          local.get $x2 i32.const 0x72 i8x16.splat i8x16.eq v128.or
          local.get $x2 i32.const 0x74 i8x16.splat i8x16.eq v128.or
          local.get $x2 i32.const 0x75 i8x16.splat i8x16.eq v128.or
          i8x16.bitmask i64.extend_i32_u i64.const 32 i64.shl i64.or
          local.get $x3 i32.const 0x22 i8x16.splat i8x16.eq
          local.get $x3 i32.const 0x5c i8x16.splat i8x16.eq v128.or
          local.get $x3 i32.const 0x2f i8x16.splat i8x16.eq v128.or
          local.get $x3 i32.const 0x62 i8x16.splat i8x16.eq v128.or
          local.get $x3 i32.const 0x66 i8x16.splat i8x16.eq v128.or
          local.get $x3 i32.const 0x6e i8x16.splat i8x16.eq v128.or
          local.get $x3 i32.const 0x72 i8x16.splat i8x16.eq v128.or
          local.get $x3 i32.const 0x74 i8x16.splat i8x16.eq v128.or
          local.get $x3 i32.const 0x75 i8x16.splat i8x16.eq v128.or
          i8x16.bitmask i64.extend_i32_u i64.const 48 i64.shl i64.or
          i64.const -1 i64.xor i64.and i64.const 0 i64.ne
          br_if $fail
          ;; $u: the escaped u's.
          local.get $e
          local.get $x0 i32.const 0x75 i8x16.splat i8x16.eq i8x16.bitmask i64.extend_i32_u
          local.get $x1 i32.const 0x75 i8x16.splat i8x16.eq i8x16.bitmask i64.extend_i32_u i64.const 16 i64.shl i64.or
          local.get $x2 i32.const 0x75 i8x16.splat i8x16.eq i8x16.bitmask i64.extend_i32_u i64.const 32 i64.shl i64.or
          local.get $x3 i32.const 0x75 i8x16.splat i8x16.eq i8x16.bitmask i64.extend_i32_u i64.const 48 i64.shl i64.or
          i64.and local.set $u
        end

        ;; After each \u, four hex digits (some of them maybe in the next block).
        local.get $u local.get $need i64.or i64.eqz i32.eqz
        if
          ;; $h: hex digits, 0-9 or (with 0x20 set, so either case) a-f.
          local.get $x0 i32.const 0x30 i8x16.splat i8x16.ge_u local.get $x0 i32.const 0x39 i8x16.splat i8x16.le_u v128.and
          local.get $x0 i32.const 0x20 i8x16.splat v128.or local.tee $y
          i32.const 0x61 i8x16.splat i8x16.ge_u local.get $y i32.const 0x66 i8x16.splat i8x16.le_u v128.and
          v128.or i8x16.bitmask i64.extend_i32_u
          local.get $x1 i32.const 0x30 i8x16.splat i8x16.ge_u local.get $x1 i32.const 0x39 i8x16.splat i8x16.le_u v128.and
          local.get $x1 i32.const 0x20 i8x16.splat v128.or local.tee $y
          i32.const 0x61 i8x16.splat i8x16.ge_u local.get $y i32.const 0x66 i8x16.splat i8x16.le_u v128.and
          v128.or i8x16.bitmask i64.extend_i32_u i64.const 16 i64.shl i64.or
          local.get $x2 i32.const 0x30 i8x16.splat i8x16.ge_u local.get $x2 i32.const 0x39 i8x16.splat i8x16.le_u v128.and
          local.get $x2 i32.const 0x20 i8x16.splat v128.or local.tee $y
          i32.const 0x61 i8x16.splat i8x16.ge_u local.get $y i32.const 0x66 i8x16.splat i8x16.le_u v128.and
          v128.or i8x16.bitmask i64.extend_i32_u i64.const 32 i64.shl i64.or
          local.get $x3 i32.const 0x30 i8x16.splat i8x16.ge_u local.get $x3 i32.const 0x39 i8x16.splat i8x16.le_u v128.and
          local.get $x3 i32.const 0x20 i8x16.splat v128.or local.tee $y
          i32.const 0x61 i8x16.splat i8x16.ge_u local.get $y i32.const 0x66 i8x16.splat i8x16.le_u v128.and
          v128.or i8x16.bitmask i64.extend_i32_u i64.const 48 i64.shl i64.or
          local.set $h
          ;; The bytes that must be hex digits: the four after each u, and those the block before asked for.
          local.get $need
          local.get $u i64.const 1 i64.shl i64.or
          local.get $u i64.const 2 i64.shl i64.or
          local.get $u i64.const 3 i64.shl i64.or
          local.get $u i64.const 4 i64.shl i64.or
          local.get $h i64.const -1 i64.xor i64.and i64.const 0 i64.ne
          br_if $fail
          ;; Those of a u in the block's last four bytes fall into the next block.
          local.get $u i64.const 63 i64.shr_u
          local.get $u i64.const 62 i64.shr_u i64.or
          local.get $u i64.const 61 i64.shr_u i64.or
          local.get $u i64.const 60 i64.shr_u i64.or
          local.set $need
        end

        local.get $p i32.const 64 i32.add local.set $p
        br $block
      end
    end
    i32.const 0
  )
  ;; 4 pages (256 KiB) to begin with; the caller grows it for a longer text.
  (memory (export "memory") 4)
)
