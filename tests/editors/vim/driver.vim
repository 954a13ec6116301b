" Headless driver: `vim -N -u vimrc -S driver.vim -i NONE -n -es FILE` (stdin must stay open, see
" scripts/vim-e2e.sh). Waits until ALE has the unveil diagnostics for FILE, writes one line per
" loclist entry to $UNVEIL_VIM_OUT:
"   ENTRY <lnum>:<col> <type> <code> <linter> <text>      (lnum/col 1-based, as ALE stores them)
" then checks that an entry with code $UNVEIL_VIM_EXPECT_CODE (default HID020), line
" $UNVEIL_VIM_EXPECT_LINE (default 5) and type E (LSP severity Error) is there.
" Exit status: 0 = expected entry present, 1 = missing, 2 = no diagnostics within $UNVEIL_VIM_TIMEOUT s.

let s:out = empty($UNVEIL_VIM_OUT) ? 'vim-e2e.out' : $UNVEIL_VIM_OUT
let s:code = empty($UNVEIL_VIM_EXPECT_CODE) ? 'HID020' : $UNVEIL_VIM_EXPECT_CODE
let s:line = empty($UNVEIL_VIM_EXPECT_LINE) ? 5 : str2nr($UNVEIL_VIM_EXPECT_LINE)
let s:timeout = empty($UNVEIL_VIM_TIMEOUT) ? 20.0 : str2float($UNVEIL_VIM_TIMEOUT)
let s:start = reltime()
let s:lines = []

function! s:Finish(status) abort
  call writefile(s:lines, s:out)
  if a:status == 0
    qall!
  endif
  execute 'cquit ' . a:status
endfunction

function! s:Poll(timer) abort
  let l:buf = bufnr('')
  let l:loclist = get(get(g:ale_buffer_info, l:buf, {}), 'loclist', [])
  let l:elapsed = reltimefloat(reltime(s:start))
  if empty(l:loclist)
    if l:elapsed > s:timeout
      call timer_stop(a:timer)
      call add(s:lines, printf('TIMEOUT no ALE diagnostics after %.1f s (filetype=%s, linters=%s)',
      \   l:elapsed, &filetype, string(map(ale#linter#Get(&filetype), 'v:val.name'))))
      call s:Finish(2)
    endif
    return
  endif
  call timer_stop(a:timer)
  call add(s:lines, printf('FILE %s filetype=%s vim=%d ale-after=%.2fs', expand('%:t'), &filetype,
  \   v:version, l:elapsed))
  let l:found = 0
  for l:e in l:loclist
    call add(s:lines, printf('ENTRY %d:%d %s %s %s %s', l:e.lnum, get(l:e, 'col', 0), get(l:e, 'type', '?'),
    \   get(l:e, 'code', '-'), get(l:e, 'linter_name', '-'), substitute(l:e.text, '\n', ' ', 'g')))
    if get(l:e, 'code', '') ==# s:code && l:e.lnum == s:line && get(l:e, 'type', '') ==# 'E'
      let l:found = 1
    endif
  endfor
  if l:found
    call add(s:lines, printf('OK %s at line %d (E)', s:code, s:line))
    call s:Finish(0)
  else
    call add(s:lines, printf('MISSING %s at line %d (E)', s:code, s:line))
    call s:Finish(1)
  endif
endfunction

function! s:Start() abort
  if &filetype !=# 'markdown'
    setfiletype markdown
  endif
  call ale#Queue(0)
  call timer_start(100, function('s:Poll'), {'repeat': -1})
endfunction

if v:vim_did_enter
  call s:Start()
else
  autocmd VimEnter * call s:Start()
endif
