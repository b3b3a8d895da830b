# bash completion for imghist(1): the options, their fixed values, and file
# or folder names where an option takes one.
_imghist()
{
    local cur prev words cword
    _init_completion 2>/dev/null || {
        cur=${COMP_WORDS[COMP_CWORD]}
        prev=${COMP_WORDS[COMP_CWORD - 1]}
    }
    local opts="-h --help --version -v --verbose -q --quiet -r --recursive
        --equalize --csv --json --total --gray -j --jobs --backend --max-pixels
        --bins --range --depth --channels --read-truncated --no-sync --mask
        --plot-dir --plot --log --color --clahe --clip --tiles --match --joint
        --max-bytes --shard --gpus --decode --space --backproject --stats"
    if [[ ${COMP_WORDS[1]} == merge ]]; then
        opts="-h --help -q --quiet -v --verbose --total --csv --json"
    fi
    case $prev in
    --gray) COMPREPLY=($(compgen -W "bgr2gray luma" -- "$cur")); return ;;
    --depth) COMPREPLY=($(compgen -W "8 native" -- "$cur")); return ;;
    --color) COMPREPLY=($(compgen -W "gray luma channels" -- "$cur")); return ;;
    --backend) COMPREPLY=($(compgen -W "auto cpu cuda" -- "$cur")); return ;;
    --decode) COMPREPLY=($(compgen -W "auto cpu gpu" -- "$cur")); return ;;
    --space) COMPREPLY=($(compgen -W "hsv hsv-full lab" -- "$cur")); return ;;
    --plot-dir) COMPREPLY=($(compgen -d -- "$cur")); return ;;
    -j | --jobs | --max-pixels | --max-bytes | --bins | --range | --clip | --tiles | \
        --shard | --gpus)
        return ;;
    --equalize | --csv | --json | --total | --plot | --mask | --match | --joint | \
        --backproject)
        COMPREPLY=($(compgen -f -- "$cur")); return ;;
    esac
    if [[ $cur == -* ]]; then
        COMPREPLY=($(compgen -W "$opts" -- "$cur"))
    elif [[ $COMP_CWORD -eq 1 ]]; then
        COMPREPLY=($(compgen -W "merge" -- "$cur") $(compgen -f -- "$cur"))
    else
        COMPREPLY=($(compgen -f -- "$cur"))
    fi
}
complete -o filenames -F _imghist imghist
